import Testing

@testable import PassModel

/// A P-256 public key as base64 DER SubjectPublicKeyInfo (from `openssl ec -pubout -outform DER`).
let p256PublicKey =
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEHQi9qj3EZGjDyPPc+Set+fs5iuBrdO6tMm4KNTUO1Ynr6WLDytPtm1qZGgYfaB21ixa091+CB8oCJdwLJ1fL4A=="
/// The same kind of key, point compressed.
let p256CompressedPublicKey = "MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgADbmq4lNyBQH4lm1cZzQp/7yXQIbHgTrrxUat0irB4Y3s="
/// A P-384 key: elliptic curve, wrong curve.
let p384PublicKey =
    "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEmPcGnwa/QRjtP5FdwFELB+gZyxhNJUTVgIMV5q9z6o35Uwhva7dHMVB49btXuJu94lgNj5Q5WgwlUMM8pcKJJTSwPwOmK6VXVl4Q1lzi5TW7HW2GCJIvT+eW4FkykrZz"
/// An RSA-1024 key: not elliptic curve at all.
let rsaPublicKey =
    "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC37usJwTG3k07rOyojXB8Wyau6H4wgpnOpo1hGvmJMUvCpH8BzWZTeYyocMewzq29Jgd4AczEk0ZGz1Na5AlGPOLRI/qKqaJpP0Dje6sN4k9n/5m9enwe0DHUKAFj5XL4So7FFZNQYZtVMswDdUnfxAtUs2JM6iNG7C0ytUcbY/wIDAQAB"

/// Keys every fixture shares.
private let identity = """
        "formatVersion": 1,
        "passTypeIdentifier": "pass.com.example.tickets",
        "serialNumber": "SN-0001",
        "teamIdentifier": "A1B2C3D4E5",
        "organizationName": "Example",
        "description": "An example pass"
    """

/// A boarding pass that uses nearly every optional key, all correctly.
let validBoardingPass = """
    {
      \(identity),
      "logoText": "Example Air",
      "foregroundColor": "rgb(255, 255, 255)",
      "backgroundColor": "rgb(20,40,80)",
      "labelColor": " rgb( 200 , 200 , 200 ) ",
      "groupingIdentifier": "trip-42",
      "webServiceURL": "https://passes.example.com/base",
      "authenticationToken": "0123456789abcdef",
      "appLaunchURL": "exampleair://pass/SN-0001",
      "associatedStoreIdentifiers": [284882215],
      "userInfo": {"tier": "gold", "miles": 1200},
      "relevantDate": "2026-12-01T09:30-08:00",
      "relevantDates": [
        {"startDate": "2026-12-01T07:30Z", "endDate": "2026-12-02T07:30Z"},
        {"date": "2026-12-02T08:00:00.5+01:00"}
      ],
      "expirationDate": "2026-12-02T00:00:00Z",
      "voided": false,
      "sharingProhibited": true,
      "suppressStripShine": true,
      "locations": [{"latitude": 37.6189, "longitude": -122.375, "altitude": 4, "relevantText": "Welcome to SFO"}],
      "beacons": [{"proximityUUID": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 0, "minor": 65535, "relevantText": "Gate A1"}],
      "maxDistance": 500,
      "barcodes": [{"format": "PKBarcodeFormatPDF417", "message": "M1APPLESEED/JANE", "messageEncoding": "iso-8859-1", "altText": "EX117"}],
      "barcode": {"format": "PKBarcodeFormatPDF417", "message": "M1APPLESEED/JANE", "messageEncoding": "iso-8859-1"},
      "nfc": {"message": "SN-0001", "encryptionPublicKey": "\(p256PublicKey)", "requiresAuthentication": false},
      "semantics": {"airlineCode": "EX", "flightNumber": 117, "departureAirportCode": "SFO", "seats": [{"seatNumber": "14C"}]},
      "boardingPass": {
        "transitType": "PKTransitTypeAir",
        "headerFields": [
          {"key": "gate", "label": "GATE", "value": "A1", "changeMessage": "Gate changed to %@", "textAlignment": "PKTextAlignmentRight"},
          {"key": "flight", "label": "FLIGHT", "value": "EX 117"},
          {"key": "zone", "label": "ZONE", "value": 3}
        ],
        "primaryFields": [
          {"key": "from", "label": "San Francisco", "value": "SFO"},
          {"key": "to", "label": "London", "value": "LHR"}
        ],
        "secondaryFields": [
          {"key": "passenger", "label": "PASSENGER", "value": "Jane Appleseed", "textAlignment": "PKTextAlignmentLeft"}
        ],
        "auxiliaryFields": [
          {"key": "boards", "label": "BOARDS", "value": "2026-12-01T09:30-08:00", "timeStyle": "PKDateStyleShort", "ignoresTimeZone": true, "isRelative": false},
          {"key": "date", "label": "DATE", "value": "2026-12-01T09:30-08:00", "dateStyle": "PKDateStyleMedium", "timeStyle": "PKDateStyleNone"},
          {"key": "seat", "label": "SEAT", "value": "14C"},
          {"key": "class", "label": "CLASS", "value": "Economy"},
          {"key": "group", "label": "GROUP", "value": 2, "numberStyle": "PKNumberStyleDecimal"}
        ],
        "backFields": [
          {"key": "terms", "label": "Terms", "value": "Call +1 555 0100",
           "dataDetectorTypes": ["PKDataDetectorTypePhoneNumber", "PKDataDetectorTypeLink"],
           "attributedValue": "See <a href=\\"https://example.com/terms\\">our terms</a> or <A HREF='https://example.com'>home</a>."}
        ]
      }
    }
    """

let validEventTicket = """
    {
      \(identity),
      "groupingIdentifier": "festival-2026",
      "relevantDate": "2026-07-04T18:00:00+02:00",
      "barcodes": [{"format": "PKBarcodeFormatQR", "message": "TICKET-1", "messageEncoding": "utf-8"}],
      "semantics": {"eventType": "PKEventTypeLivePerformance", "venueName": "Main Stage"},
      "eventTicket": {
        "headerFields": [{"key": "date", "label": "DATE", "value": "2026-07-04T18:00+02:00", "dateStyle": "PKDateStyleShort"}],
        "primaryFields": [{"key": "event", "label": "EVENT", "value": "Summer Festival"}],
        "secondaryFields": [{"key": "section", "label": "SECTION", "value": "B"}],
        "auxiliaryFields": [
          {"key": "row", "label": "ROW", "value": 12, "row": 0},
          {"key": "seat", "label": "SEAT", "value": 7, "row": 1, "semantics": {"eventType": "PKEventTypeSports"}}
        ],
        "backFields": [{"key": "info", "label": "INFO", "value": "Doors open at 17:00"}]
      }
    }
    """

let validCoupon = """
    {
      \(identity),
      "barcodes": [{"format": "PKBarcodeFormatQR", "message": "SAVE25", "messageEncoding": "iso-8859-1"}],
      "coupon": {
        "primaryFields": [{"key": "offer", "label": "OFF", "value": 0.25, "numberStyle": "PKNumberStylePercent"}],
        "secondaryFields": [{"key": "expires", "label": "EXPIRES", "value": "2026-12-31T23:59Z", "dateStyle": "PKDateStyleLong", "isRelative": true}],
        "auxiliaryFields": [{"key": "minimum", "label": "MIN. SPEND", "value": 20, "currencyCode": "EUR"}]
      }
    }
    """

let validStoreCard = """
    {
      \(identity),
      "barcodes": [{"format": "PKBarcodeFormatAztec", "message": "CARD-9", "messageEncoding": "iso-8859-1"}],
      "storeCard": {
        "headerFields": [{"key": "points", "label": "POINTS", "value": 1200}],
        "primaryFields": [{"key": "balance", "label": "BALANCE", "value": 25.5, "currencyCode": "USD"}],
        "secondaryFields": [{"key": "name", "label": "NAME", "value": "Jane"}, {"key": "tier", "label": "TIER", "value": "Gold"}],
        "auxiliaryFields": [{"key": "since", "label": "SINCE", "value": "2020"}, {"key": "store", "label": "STORE", "value": "Main St"}]
      }
    }
    """

let validGeneric = """
    {
      \(identity),
      "barcodes": [{"format": "PKBarcodeFormatPDF417", "message": "ID-7", "messageEncoding": "iso-8859-1"}],
      "generic": {
        "primaryFields": [{"key": "name", "label": "NAME", "value": "Jane Appleseed"}],
        "secondaryFields": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}, {"key": "c", "value": "3"}, {"key": "d", "value": "4"}],
        "auxiliaryFields": [{"key": "e", "value": "5"}, {"key": "f", "value": "6"}, {"key": "g", "value": "7"}, {"key": "h", "value": "8"}]
      }
    }
    """

let validPosterGeneric = """
    {
      \(identity),
      "logoSymbolName": "building.columns",
      "barcodes": [{"format": "PKBarcodeFormatQR", "message": "MUSEUM-7", "messageEncoding": "iso-8859-1"}],
      "posterGeneric": {
        "primaryFields": [{"key": "exhibition", "label": "EXHIBITION", "value": "Northern Lights"}],
        "secondaryFields": [{"key": "valid", "label": "VALID UNTIL", "value": "2027-03-31T18:00+01:00", "dateStyle": "PKDateStyleMedium"}],
        "footerFields": [{"key": "holder", "label": "HOLDER", "value": "Jane Appleseed"}],
        "backFields": [{"key": "terms", "label": "Terms", "value": "One visit per day."}],
        "additionalInfoFields": [{"key": "hours", "label": "Opening hours", "value": "Tue–Sun 10:00–18:00"}]
      }
    }
    """

/// An event ticket laid out as a poster: everything Apple's validator asks for, nothing it warns about.
let validPosterEventTicket = """
    {
      \(identity),
      "preferredStyleSchemes": ["posterEventTicket", "eventTicket"],
      "sharingProhibited": true,
      "eventLogoText": "Harbour FC",
      "footerBackgroundColor": "rgb(10, 30, 60)",
      "stripColor": "rgb(10, 30, 60)",
      "useAutomaticColors": true,
      "suppressHeaderDarkening": false,
      "auxiliaryStoreIdentifiers": [284882215],
      "sellURL": "https://tickets.example.com/sell/SN-0001",
      "transferURL": "https://tickets.example.com/transfer/SN-0001",
      "contactVenueEmail": "hello@example.com",
      "featuredActions": [{"identifier": "food", "type": "orderFood", "url": "https://food.example.com/"}],
      "nfc": {"message": "SN-0001", "encryptionPublicKey": "\(p256PublicKey)", "requiresAuthentication": true},
      "barcodes": [
        {"format": "PKBarcodeFormatEAN13", "message": "4006381333931", "messageEncoding": "iso-8859-1"},
        {"format": "PKBarcodeFormatQR", "message": "SN-0001", "messageEncoding": "iso-8859-1"}
      ],
      "semantics": {
        "eventType": "PKEventTypeSports",
        "eventName": "Harbour FC v Lakeside United",
        "venueName": "Harbour Stadium",
        "eventStartDate": "2026-12-19T15:00:00+01:00",
        "eventEndDate": "2026-12-19T17:00:00+01:00",
        "eventStartDateInfo": {"date": "2026-12-19T15:00:00+01:00", "timeZone": "Europe/Berlin", "unannounced": false},
        "homeTeamAbbreviation": "HFC", "homeTeamName": "Harbour FC",
        "awayTeamAbbreviation": "LAK", "awayTeamName": "Lakeside United",
        "leagueName": "North League", "sportName": "Football",
        "venueLocation": {"latitude": 53.55, "longitude": 9.97},
        "admissionLevel": "Season ticket", "tailgatingAllowed": false, "duration": 7200,
        "seats": [{"seatSection": "B", "seatRow": "12", "seatNumber": "7", "seatSectionColor": "rgb(0, 90, 200)"}],
        "totalPrice": {"amount": "45.00", "currencyCode": "EUR"},
        "wifiAccess": [{"ssid": "Stadium", "password": "goal2026"}]
      },
      "upcomingPassInformation": [
        {
          "identifier": "match-2027-01-09", "name": "Harbour FC v Hill Rovers", "type": "event", "isActive": false,
          "dateInformation": {"date": "2027-01-09T15:00:00+01:00", "timeZone": "Europe/Berlin", "isAllDay": false},
          "urls": {"parkingInformationURL": "https://stadium.example.com/parking"},
          "images": {"headerImage": {"urls": [{"url": "https://img.example.com/h.png", "sha256": "\(String(repeating: "ab", count: 32))", "scale": 2, "size": 120000}], "reuseExisting": false}},
          "semantics": {"eventName": "Harbour FC v Hill Rovers", "venueName": "Harbour Stadium"},
          "additionalInfoFields": [{"key": "kickoff", "label": "KICK-OFF", "value": "15:00"}],
          "backFields": [{"key": "kickoffBack", "label": "KICK-OFF", "value": "15:00"}],
          "auxiliaryStoreIdentifiers": [284882215]
        }
      ],
      "eventTicket": {
        "primaryFields": [{"key": "match", "label": "MATCH", "value": "Harbour FC v Lakeside United"}],
        "additionalInfoFields": [{"key": "kickoff", "label": "KICK-OFF", "value": "15:00"}]
      }
    }
    """

/// A boarding pass laid out from its semantic tags, with every tag Apple's validator asks for.
let validSemanticBoardingPass = """
    {
      \(identity),
      "preferredStyleSchemes": ["semanticBoardingPass", "boardingPass"],
      "changeSeatURL": "https://air.example.com/seat",
      "transitProviderPhoneNumber": "+44 20 7946 0000",
      "barcodes": [{"format": "PKBarcodeFormatPDF417", "message": "M1APPLESEED/JANE", "messageEncoding": "iso-8859-1"}],
      "semantics": {
        "airlineCode": "EX", "flightCode": "EX117", "flightNumber": 117,
        "originalDepartureDate": "2026-12-01T09:30:00Z", "originalBoardingDate": "2026-12-01T08:50:00Z",
        "originalArrivalDate": "2026-12-01T12:40:00-05:00",
        "departureAirportCode": "LHR", "departureAirportTimeZone": "Europe/London", "departureCityName": "London",
        "destinationAirportCode": "JFK", "destinationAirportTimeZone": "America/New_York", "destinationCityName": "New York",
        "departureLocation": {"latitude": 51.47, "longitude": -0.4543},
        "passengerName": {"givenName": "Jane", "familyName": "Appleseed"},
        "passengerCapabilities": ["PRIORITY_BOARDING"], "ticketFareClass": "Economy",
        "internationalDocumentsAreVerified": true, "internationalDocumentsVerifiedDeclarationName": "DOCS OK",
        "seats": [{"seatNumber": "14C", "seatType": "Aisle"}]
      },
      "boardingPass": {
        "transitType": "PKTransitTypeAir",
        "primaryFields": [{"key": "from", "label": "London", "value": "LHR"}, {"key": "to", "label": "New York", "value": "JFK"}]
      }
    }
    """

/// A valid pass of `style`, parsed.
func validPass(_ style: PassStyle) -> JSONValue {
    let text: String
    switch style {
    case .boardingPass: text = validBoardingPass
    case .eventTicket: text = validEventTicket
    case .coupon: text = validCoupon
    case .storeCard: text = validStoreCard
    case .generic: text = validGeneric
    case .posterGeneric: text = validPosterGeneric
    }
    return try! JSONValue(parsing: text)
}

/// A pass parsed from fixture text.
func parsed(_ text: String) -> JSONValue { try! JSONValue(parsing: text) }

/// The smallest valid pass of `style`.
func minimalPass(_ style: PassStyle) -> JSONValue {
    var object: JSONObject = [
        "formatVersion": 1,
        "passTypeIdentifier": "pass.com.example.tickets",
        "serialNumber": "SN-0001",
        "teamIdentifier": "A1B2C3D4E5",
        "organizationName": "Example",
        "description": "An example pass",
    ]
    object[style.key] = style == .boardingPass ? ["transitType": "PKTransitTypeTrain"] : [:]
    return .object(object)
}

func validate(_ pass: JSONValue, allowingHTTP: Bool = false) -> [Diagnostic] {
    PassValidator().validate(pass, options: .init(allowsHTTPWebService: allowingHTTP))
}

/// Diagnostics as "error rule @ path" lines, for exact comparisons.
func problems(_ diagnostics: [Diagnostic]) -> [String] {
    diagnostics.map { "\($0.severity.rawValue) \($0.rule) @ \($0.keyPath)" }
}

func problems(of pass: JSONValue, allowingHTTP: Bool = false) -> [String] {
    problems(validate(pass, allowingHTTP: allowingHTTP))
}

/// The diagnostic of `rule` at `path`, recording an issue when there is none.
@discardableResult
func expectDiagnostic(
    _ diagnostics: [Diagnostic], rule: String, at path: String, severity: Diagnostic.Severity = .error,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Diagnostic? {
    let match = diagnostics.first { $0.rule == rule && $0.keyPath.description == path && $0.severity == severity }
    #expect(
        match != nil, "expected \(severity.rawValue) \(rule) at \(path); got \(problems(diagnostics))",
        sourceLocation: sourceLocation)
    return match
}

extension JSONValue {
    /// A copy with the value at `path` (like `boardingPass.primaryFields[0].key`) replaced, or removed when nil.
    func setting(_ path: String, _ newValue: JSONValue?) -> JSONValue {
        updating(parsePath(path)[...], newValue)
    }

    private func updating(_ path: ArraySlice<JSONPath.Component>, _ newValue: JSONValue?) -> JSONValue {
        guard let first = path.first else { return newValue ?? .null }
        switch (self, first) {
        case (.object(var object), .key(let key)):
            if path.count == 1 {
                object[key] = newValue
            } else {
                object[key] = (object[key] ?? .object(JSONObject())).updating(path.dropFirst(), newValue)
            }
            return .object(object)
        case (.array(var items), .index(let index)):
            if path.count == 1, newValue == nil {
                items.remove(at: index)
            } else if index == items.count {
                items.append(JSONValue.object(JSONObject()).updating(path.dropFirst(), newValue))
            } else {
                items[index] = items[index].updating(path.dropFirst(), newValue)
            }
            return .array(items)
        default:
            fatalError("cannot follow \(first) in \(typeName)")
        }
    }

    func value(at path: String) -> JSONValue? {
        var current: JSONValue? = self
        for component in parsePath(path) {
            switch component {
            case .key(let key): current = current?[key]
            case .index(let index): current = current?.arrayValue.flatMap { index < $0.count ? $0[index] : nil }
            }
        }
        return current
    }
}

private func parsePath(_ path: String) -> [JSONPath.Component] {
    var components: [JSONPath.Component] = []
    for part in path.split(separator: ".") {
        var name = Substring(part)
        var indices: [Int] = []
        while let open = name.lastIndex(of: "["), name.hasSuffix("]") {
            indices.insert(Int(name[name.index(after: open)..<name.index(before: name.endIndex)])!, at: 0)
            name = name[..<open]
        }
        if !name.isEmpty { components.append(.key(String(name))) }
        components += indices.map { .index($0) }
    }
    return components
}

/// `count` simple fields with keys `prefix0`, `prefix1`, ….
func fields(_ count: Int, prefix: String) -> JSONValue {
    .array((0..<count).map { ["key": .string("\(prefix)\($0)"), "value": "x"] })
}
