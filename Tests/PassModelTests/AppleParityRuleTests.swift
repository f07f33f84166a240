import Testing

@testable import PassModel

// The keys and rules Apple's pass-builder package knows: one test per new
// key (a good pass has no diagnostics) and per new rule (a bad pass is
// reported, naming the key).

let posterEventTicket = parsed(validPosterEventTicket)

/// A key (or semantic tag), a value for it, and a style it suits.
struct KeyExample: Sendable, CustomTestStringConvertible {
    let key: String
    let value: JSONValue
    let style: PassStyle

    init(_ key: String, _ value: JSONValue, _ style: PassStyle) {
        self.key = key
        self.value = value
        self.style = style
    }

    var testDescription: String { "\(key) on \(style.key)" }
}
let semanticBoardingPass = parsed(validSemanticBoardingPass)

@Suite struct NewKeyTests {
    @Test func posterEventTicketWithEveryNewKeyHasNoDiagnostics() throws {
        #expect(problems(of: posterEventTicket) == [])
        #expect(try Pass(json: posterEventTicket).preferredStyleSchemes == ["posterEventTicket", "eventTicket"])
    }

    @Test func semanticBoardingPassHasNoDiagnostics() throws {
        #expect(problems(of: semanticBoardingPass) == [])
        #expect(try Pass(json: semanticBoardingPass).semantics?["flightNumber"] == 117)
    }

    @Test func posterGenericStyleHasNoDiagnostics() throws {
        let json = parsed(validPosterGeneric)
        #expect(problems(of: json) == [])
        let pass = try Pass(json: json)
        #expect(pass.style == .posterGeneric)
        #expect(pass.posterGeneric?[.footer].first?.key == "holder")
        #expect(pass.posterGeneric?[.additionalInfo].first?.key == "hours")
        #expect(pass.logoSymbolName == "building.columns")
    }

    /// Each key alone on a pass it suits, with no other new key around it.
    @Test(arguments: [
        KeyExample("logoSymbolName", "ticket", .generic),
        KeyExample("stripColor", "rgb(1, 2, 3)", .coupon),
        KeyExample(
            "featuredActions",
            [
                ["identifier": "a", "type": "openURL", "url": "https://example.com/"],
                ["identifier": "b", "type": "call"],
            ], .storeCard),
        KeyExample(
            "upcomingPassInformation", [["identifier": "day-2", "name": "Day 2", "type": "event"]], .eventTicket),
        KeyExample("preferredStyleSchemes", ["eventTicket"], .eventTicket),
    ])
    func newKeyAloneIsAccepted(_ example: KeyExample) {
        let (key, value, style) = (example.key, example.value, example.style)
        #expect(problems(of: minimalPass(style).setting(key, value)) == [])
    }

    /// The keys that only poster event tickets show, each on a poster event ticket.
    @Test(arguments: PassLinks.posterEventTicketOnlyKeys)
    func posterEventTicketKeyIsAccepted(key: String) {
        let value: JSONValue =
            switch key {
            case "auxiliaryStoreIdentifiers": [284_882_215]
            case "footerBackgroundColor": "rgb(0, 0, 0)"
            case "suppressHeaderDarkening", "useAutomaticColors": true
            default: .string("https://example.com/\(key)")
            }
        #expect(problems(of: posterEventTicket.setting(key, value)) == [])
    }

    /// The travel link keys, each on a boarding pass.
    @Test(arguments: PassLinks.travelKeys)
    func travelLinkIsAccepted(key: String) {
        #expect(problems(of: minimalPass(.boardingPass).setting(key, .string("https://air.example.com/\(key)"))) == [])
    }

    @Test(arguments: ["footerFields", "additionalInfoFields"])
    func newFieldAreasAreAccepted(area: String) {
        let json = minimalPass(.eventTicket).setting("eventTicket.\(area)", [["key": "k", "label": "L", "value": "v"]])
        #expect(problems(of: json) == [])
    }

    @Test func additionalInfoFieldsMayDetectLinks() {
        let json = minimalPass(.generic).setting(
            "generic.additionalInfoFields",
            [["key": "k", "value": "https://example.com", "dataDetectorTypes": ["PKDataDetectorTypeLink"]]])
        #expect(problems(of: json) == [])
    }

    /// Semantic tags of each family, on the style they are for.
    @Test(arguments: [
        KeyExample(
            "eventStartDateInfo",
            .object([
                "date": "2026-12-12T20:00+01:00", "timeZone": "Europe/Berlin", "ignoreTimeComponents": false,
                "unannounced": false, "undetermined": false,
            ]), .eventTicket),
        KeyExample("venueDoorsOpenDate", "2026-12-12T19:00:00+01:00", .eventTicket),
        KeyExample("venueEntranceGate", "4", .eventTicket),
        KeyExample("tailgatingAllowed", true, .eventTicket),
        KeyExample("albumIDs", ["1440833098"], .eventTicket),
        KeyExample("playlistIDs", ["pl.1"], .eventTicket),
        KeyExample("genre", "Jazz", .eventTicket),
        KeyExample("leagueAbbreviation", "NL", .eventTicket),
        KeyExample("homeTeamLocation", "Hamburg", .eventTicket),
        KeyExample(
            "seats",
            [
                [
                    "seatIdentifier": "B-12-7", "seatAisle": "3", "seatLevel": "Upper", "seatDescription": "Aisle seat",
                    "seatSectionColor": "rgb(200, 0, 0)",
                ]
            ], .eventTicket),
        KeyExample("boardingZone", "3", .boardingPass),
        KeyExample("airlineLoungePlaceID", "I5C0A3E4B1F2D", .boardingPass),
        KeyExample("carNumber", "7", .boardingPass),
        KeyExample("departurePlatform", "4", .boardingPass),
        KeyExample("destinationStationName", "Hamburg Hbf", .boardingPass),
        KeyExample("currentDepartureDate", "2026-12-01T09:45:00Z", .boardingPass),
        KeyExample("passengerServiceSSRs", ["WCHR"], .boardingPass),
        KeyExample("departureAirportSecurityPrograms", ["TSA_PRECHECK"], .boardingPass),
        KeyExample("destinationLocation", ["latitude": 40.64, "longitude": -73.78], .boardingPass),
        KeyExample("passengerName", ["givenName": "Jane", "phoneticRepresentation": "jein"], .boardingPass),
        KeyExample("transitStatus", "On time", .boardingPass),
        KeyExample("duration", 25200, .boardingPass),
        KeyExample("silenceRequested", true, .eventTicket),
        KeyExample("balance", ["amount": "12.50", "currencyCode": "EUR"], .storeCard),
        KeyExample("totalPrice", ["amount": "12.50", "currencyCode": "EUR"], .coupon),
        KeyExample("wifiAccess", [["ssid": "Cafe", "password": "latte"]], .generic),
    ])
    func semanticTagIsAccepted(_ example: KeyExample) {
        let (tag, value, style) = (example.key, example.value, example.style)
        #expect(problems(of: minimalPass(style).setting("semantics", .object([tag: value]))) == [])
    }

    @Test(arguments: [
        "PKBarcodeFormatCode39", "PKBarcodeFormatCodabar", "PKBarcodeFormatEAN13", "PKBarcodeFormatI2of5",
    ])
    func recentBarcodeFormatWithAFallbackIsAccepted(format: String) throws {
        let json = minimalPass(.storeCard).setting(
            "barcodes",
            [
                ["format": .string(format), "message": "4006381333931", "messageEncoding": "iso-8859-1"],
                ["format": "PKBarcodeFormatPDF417", "message": "4006381333931", "messageEncoding": "iso-8859-1"],
            ])
        #expect(problems(of: json) == [])
        #expect(try Pass(json: json).barcodes?.first?.format.rawValue == format)
    }
}

@Suite struct PosterEventTicketRuleTests {
    @Test func nfcIsRequired() {
        let diagnostics = validate(posterEventTicket.setting("nfc", nil))
        #expect(problems(diagnostics) == ["error posterEventTicket.nfc @ nfc"])
        #expect(diagnostics[0].message.contains("needs nfc"))
    }

    @Test func nfcRequiresAuthenticationIsRequired() {
        let diagnostics = validate(posterEventTicket.setting("nfc.requiresAuthentication", nil))
        #expect(
            problems(diagnostics) == ["error posterEventTicket.nfc.requiresAuthentication @ nfc.requiresAuthentication"]
        )
        // false is an answer too.
        #expect(problems(of: posterEventTicket.setting("nfc.requiresAuthentication", false)) == [])
    }

    @Test(arguments: ["eventName", "venueName"])
    func eventAndVenueNamesAreRequired(tag: String) {
        let absent = validate(posterEventTicket.setting("semantics.\(tag)", nil))
        #expect(problems(absent) == ["error posterEventTicket.\(tag) @ semantics.\(tag)"])
        #expect(absent.first?.message.contains("add \"\(tag)\"") == true)
        let empty = validate(posterEventTicket.setting("semantics.\(tag)", .string("")))
        #expect(problems(empty) == ["error posterEventTicket.\(tag) @ semantics.\(tag)"])
    }

    @Test func startDateIsRecommended() {
        let json = posterEventTicket.setting("semantics.eventStartDate", nil).setting("semantics.eventEndDate", nil)
        #expect(problems(of: json) == ["warning posterEventTicket.eventStartDate @ semantics.eventStartDate"])
    }

    @Test func endBeforeStartIsAWarning() {
        let json = posterEventTicket.setting("semantics.eventEndDate", "2026-12-19T13:00:00+01:00")
        #expect(problems(of: json) == ["warning posterEventTicket.eventEndDate @ semantics.eventEndDate"])
    }

    @Test(arguments: ["awayTeamAbbreviation", "homeTeamAbbreviation"])
    func sportsTicketsNeedTeamAbbreviations(tag: String) {
        #expect(
            problems(of: posterEventTicket.setting("semantics.\(tag)", nil)) == [
                "error posterEventTicket.\(tag) @ semantics.\(tag)"
            ])
    }

    var livePerformance: JSONValue {
        posterEventTicket.setting(
            "semantics",
            [
                "eventType": "PKEventTypeLivePerformance", "eventName": "Long Night Tour", "venueName": "Harbour Hall",
                "eventStartDate": "2026-12-12T20:00:00+01:00", "performerNames": ["The Midnight Owls"],
                "artistIDs": ["1"],
                "seats": [["seatNumber": "7"]],
            ])
    }

    @Test func livePerformanceNeedsPerformers() {
        #expect(problems(of: livePerformance) == [])
        #expect(
            problems(of: livePerformance.setting("semantics.performerNames", [])) == [
                "error posterEventTicket.performerNames @ semantics.performerNames"
            ])
    }

    @Test func livePerformanceShouldHaveArtistIDs() {
        #expect(
            problems(of: livePerformance.setting("semantics.artistIDs", nil)) == [
                "warning posterEventTicket.artistIDs @ semantics.artistIDs"
            ])
    }

    @Test func seatsAreRecommended() {
        #expect(
            problems(of: posterEventTicket.setting("semantics.seats", [])) == [
                "warning posterEventTicket.seats @ semantics.seats"
            ])
    }

    @Test func withoutTheSchemeNoneOfThisIsRequired() {
        let classic = minimalPass(.eventTicket).setting("preferredStyleSchemes", ["eventTicket"])
        #expect(problems(of: classic) == [])
    }

    @Test func schemeOnAnotherStyleIsIgnoredWithAWarning() {
        let json = minimalPass(.boardingPass).setting("preferredStyleSchemes", ["posterEventTicket"])
        #expect(problems(of: json) == ["warning preferredStyleSchemes.style @ preferredStyleSchemes[0]"])
    }

    @Test func unknownSchemeIsAWarningWithASuggestion() {
        let diagnostics = validate(minimalPass(.eventTicket).setting("preferredStyleSchemes", ["posterEventTickets"]))
        #expect(problems(diagnostics) == ["warning preferredStyleSchemes.value @ preferredStyleSchemes[0]"])
        #expect(diagnostics[0].message.contains("did you mean \"posterEventTicket\""))
    }

    @Test(arguments: ["sellURL", "footerBackgroundColor", "useAutomaticColors", "eventLogoText"])
    func posterOnlyKeyOnAnotherPassIsAWarning(key: String) {
        let json = minimalPass(.eventTicket).setting(
            key, key == "useAutomaticColors" ? true : key == "footerBackgroundColor" ? "rgb(0, 0, 0)" : "x")
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["warning key.posterEventTicketOnly @ \(key)"])
        #expect(diagnostics[0].message.contains("posterEventTicket"))
    }
}

@Suite struct SemanticBoardingPassRuleTests {
    @Test(arguments: [
        ("airlineCode", Diagnostic.Severity.error), ("flightNumber", .error), ("originalDepartureDate", .error),
        ("originalBoardingDate", .error), ("originalArrivalDate", .error), ("departureAirportTimeZone", .error),
        ("departureAirportCode", .error), ("departureCityName", .warning), ("destinationAirportTimeZone", .warning),
        ("destinationAirportCode", .error), ("destinationCityName", .warning), ("passengerName", .error),
    ])
    func requiredAndRecommendedTags(tag: String, severity: Diagnostic.Severity) {
        let diagnostics = validate(semanticBoardingPass.setting("semantics.\(tag)", nil))
        #expect(problems(diagnostics) == ["\(severity.rawValue) semanticBoardingPass.\(tag) @ semantics.\(tag)"])
        #expect(diagnostics.first?.message.contains(tag) == true)
    }

    @Test func passengerNameNeedsMoreThanAPhoneticName() {
        let phoneticOnly = semanticBoardingPass.setting("semantics.passengerName", ["phoneticRepresentation": "jein"])
        #expect(problems(of: phoneticOnly) == ["error semanticBoardingPass.passengerName @ semantics.passengerName"])
        // Like Apple's validator, an empty part still counts as a name.
        #expect(problems(of: semanticBoardingPass.setting("semantics.passengerName", ["nickname": ""])) == [])
    }

    @Test func seatsAreRecommended() {
        #expect(
            problems(of: semanticBoardingPass.setting("semantics.seats", nil)) == [
                "warning semanticBoardingPass.seats @ semantics.seats"
            ])
    }

    @Test func rulesApplyWhateverTheTransitType() {
        let train = semanticBoardingPass.setting("boardingPass.transitType", "PKTransitTypeTrain").setting(
            "semantics.airlineCode", nil)
        #expect(problems(of: train) == ["error semanticBoardingPass.airlineCode @ semantics.airlineCode"])
    }
}

@Suite struct RequiredDictionaryKeyTests {
    @Test(arguments: ["message", "encryptionPublicKey"])
    func nfcKeys(key: String) {
        let diagnostics = validate(posterEventTicket.setting("nfc.\(key)", nil))
        #expect(
            problems(diagnostics).contains(
                "error nfc.\(key == "message" ? "message" : "encryptionPublicKey.missing") @ nfc.\(key)"))
    }

    @Test(arguments: ["latitude", "longitude"])
    func semanticLocationCoordinates(key: String) {
        let json = posterEventTicket.setting("semantics.venueLocation.\(key)", nil)
        #expect(problems(of: json) == ["error location.\(key) @ semantics.venueLocation.\(key)"])
    }

    @Test(arguments: ["ssid", "password"])
    func wifiNetworkKeys(key: String) {
        let json = posterEventTicket.setting("semantics.wifiAccess[0].\(key)", nil)
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["error semantics.wifiAccess.\(key) @ semantics.wifiAccess[0].\(key)"])
        #expect(diagnostics[0].message.contains("has no \(key)"))
    }

    @Test(arguments: ["identifier", "type"])
    func featuredActionKeys(key: String) {
        #expect(
            problems(of: posterEventTicket.setting("featuredActions[0].\(key)", nil)) == [
                "error featuredAction.\(key) @ featuredActions[0].\(key)"
            ])
    }

    @Test func featuredActionIdentifiersAreUnique() {
        let json = posterEventTicket.setting("featuredActions[1]", ["identifier": "food", "type": "x"])
        #expect(problems(of: json) == ["error featuredAction.identifier.unique @ featuredActions[1].identifier"])
    }

    @Test(arguments: ["identifier", "name", "type"])
    func upcomingEntryKeys(key: String) {
        #expect(
            problems(of: posterEventTicket.setting("upcomingPassInformation[0].\(key)", nil)) == [
                "error upcoming.\(key) @ upcomingPassInformation[0].\(key)"
            ])
    }

    @Test(arguments: ["url", "sha256"])
    func upcomingImageURLKeys(key: String) {
        let path = "upcomingPassInformation[0].images.headerImage.urls[0].\(key)"
        #expect(problems(of: posterEventTicket.setting(path, nil)) == ["error upcoming.image.\(key) @ \(path)"])
    }

    @Test(arguments: ["barcodes[0].format", "barcodes[0].message", "barcodes[0].messageEncoding"])
    func barcodeKeys(path: String) {
        let rule = "barcode." + path.split(separator: ".").last!
        #expect(problems(of: semanticBoardingPass.setting(path, nil)).contains("error \(rule) @ \(path)"))
    }

    @Test(arguments: ["latitude", "longitude"])
    func locationKeys(key: String) {
        let json = minimalPass(.generic).setting("locations", [["latitude": 1, "longitude": 2]]).setting(
            "locations[0].\(key)", nil)
        #expect(problems(of: json) == ["error location.\(key) @ locations[0].\(key)"])
    }

    @Test func beaconKey() {
        #expect(
            problems(of: minimalPass(.generic).setting("beacons", [["major": 1]])) == [
                "error beacon.proximityUUID @ beacons[0].proximityUUID"
            ])
    }

    @Test func relevantDatesEntryKeys() {
        let json = minimalPass(.generic).setting("relevantDates", [["startDate": "2026-12-01T09:30Z"]])
        #expect(problems(of: json) == ["error relevantDates.entry @ relevantDates[0].endDate"])
    }
}

@Suite struct NewLimitTests {
    @Test(arguments: [
        "PKBarcodeFormatCode39", "PKBarcodeFormatCodabar", "PKBarcodeFormatEAN13", "PKBarcodeFormatI2of5",
    ])
    func recentFormatAsOnlyBarcodeIsAWarning(format: String) {
        let json = minimalPass(.coupon).setting(
            "barcodes", [["format": .string(format), "message": "4006381333931", "messageEncoding": "iso-8859-1"]])
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["warning barcode.recentFormatOnly @ barcodes[0].format"])
        #expect(diagnostics[0].message.contains("older iOS"))
    }

    @Test func semanticTagTypesAreChecked() {
        let json = semanticBoardingPass.setting("semantics.flightNumber", "117").setting(
            "semantics.seats[0].seatNumber", 14
        )
        .setting("semantics.originalArrivalDate", "2026-12-01").setting("semantics.passengerCapabilities", "PRIORITY")
        #expect(
            Set(problems(of: json)) == [
                "error date.format @ semantics.originalArrivalDate",
                "error key.type @ semantics.flightNumber",
                "error key.type @ semantics.passengerCapabilities",
                "error key.type @ semantics.seats[0].seatNumber",
            ])
    }

    @Test func semanticTagOnAnotherStyleIsAWarning() {
        let diagnostics = validate(minimalPass(.coupon).setting("semantics", ["airlineCode": "EX"]))
        #expect(problems(diagnostics) == ["warning semantics.style @ semantics.airlineCode"])
        #expect(diagnostics[0].message.contains("boarding passes"))
    }

    @Test func newColorsAreChecked() {
        #expect(
            problems(of: posterEventTicket.setting("footerBackgroundColor", "#000000")) == [
                "error color @ footerBackgroundColor"
            ])
        #expect(
            problems(of: posterEventTicket.setting("semantics.seats[0].seatSectionColor", "red")) == [
                "error color @ semantics.seats[0].seatSectionColor"
            ])
    }

    @Test func currencyCodeAndNumberStyleTogetherIsAWarning() {
        let json = minimalPass(.storeCard).setting(
            "storeCard.primaryFields",
            [["key": "b", "value": 5, "currencyCode": "EUR", "numberStyle": "PKNumberStyleDecimal"]])
        #expect(
            problems(of: json) == ["warning field.currencyCode.numberStyle @ storeCard.primaryFields[0].currencyCode"])
    }

    @Test func upcomingEntryTypeOtherThanEventIsAWarning() {
        #expect(
            problems(of: posterEventTicket.setting("upcomingPassInformation[0].type", "flight")) == [
                "warning upcoming.type.value @ upcomingPassInformation[0].type"
            ])
    }

    @Test func upcomingEntryIdentifiersAreUnique() {
        let json = posterEventTicket.setting(
            "upcomingPassInformation[1]", ["identifier": "match-2027-01-09", "name": "Again", "type": "event"])
        #expect(problems(of: json) == ["error upcoming.identifier.unique @ upcomingPassInformation[1].identifier"])
    }

    @Test func upcomingImagesAreHTTPSAndAtMost2MB() {
        let path = "upcomingPassInformation[0].images.headerImage.urls[0]"
        #expect(
            problems(of: posterEventTicket.setting("\(path).url", "http://img.example.com/h.png")) == [
                "error upcoming.image.url @ \(path).url"
            ])
        #expect(
            problems(of: posterEventTicket.setting("\(path).size", 2_097_153)) == [
                "error upcoming.image.size @ \(path).size"
            ])
    }

    @Test func upcomingEntryDateIsChecked() {
        let json = posterEventTicket.setting("upcomingPassInformation[0].dateInformation.date", "2027-01-09")
        #expect(problems(of: json) == ["error date.format @ upcomingPassInformation[0].dateInformation.date"])
    }

    @Test func nfcAuthenticationWithoutSharingProhibitedIsAWarning() {
        #expect(
            problems(of: posterEventTicket.setting("sharingProhibited", nil)) == [
                "warning nfc.requiresAuthentication.sharing @ nfc.requiresAuthentication"
            ])
    }
}

@Suite struct PosterImageRuleTests {
    func png(_ width: UInt32, _ height: UInt32) -> [UInt8] { makePNG(width: width, height: height) }
    var icons: [String: [UInt8]] {
        ["icon.png": png(38, 38), "icon@2x.png": png(76, 76), "icon@3x.png": png(114, 114)]
    }

    @Test func posterEventTicketNeedsArtworkOrBackground() {
        let diagnostics = ImageRules.validate(files: icons, pass: posterEventTicket)
        #expect(problems(diagnostics) == ["error image.posterArtwork @ artwork.png"])
        #expect(diagnostics[0].message.contains("artwork.png"))
        #expect(
            problems(
                ImageRules.validate(
                    files: icons.merging(["artwork@3x.png": png(1074, 1344)]) { $1 }, pass: posterEventTicket)) == [])
        #expect(
            problems(
                ImageRules.validate(
                    files: icons.merging(["background@2x.png": png(690, 1010)]) { $1 }, pass: posterEventTicket)) == [])
    }

    @Test func posterImagesAndSizes() {
        let files = icons.merging([
            "artwork.png": png(358, 448), "artwork@2x.png": png(716, 896), "primaryLogo@2x.png": png(252, 60),
            "secondaryLogo@3x.png": png(405, 36), "logo.png": png(160, 50),
        ]) { $1 }
        #expect(problems(ImageRules.validate(files: files, pass: posterEventTicket)) == [])
        #expect(
            problems(
                ImageRules.validate(
                    files: files.merging(["background.png": png(345, 505)]) { $1 }, pass: parsed(validPosterGeneric)))
                == [])
        #expect(
            problems(
                ImageRules.validate(
                    files: icons.merging(["artwork.png": png(375, 448)]) { $1 }, pass: posterEventTicket)) == [
                    "warning image.size @ artwork.png"
                ])
        #expect(
            problems(
                ImageRules.validate(
                    files: icons.merging(["secondaryLogo.png": png(135, 13)]) { $1 }, pass: parsed(validPosterGeneric)))
                == ["warning image.size @ secondaryLogo.png"])
    }

    @Test func posterImagesOnAClassicEventTicketAreAWarning() {
        let files = icons.merging(["artwork.png": png(358, 448)]) { $1 }
        #expect(
            problems(ImageRules.validate(files: files, pass: minimalPass(.eventTicket))) == [
                "warning image.posterOnly @ artwork.png"
            ])
        // Without the pass.json the scheme is unknown, so nothing is said.
        #expect(problems(ImageRules.validate(files: files, style: .eventTicket)) == [])
        #expect(
            problems(ImageRules.validate(files: files, pass: minimalPass(.generic))) == [
                "error image.notAllowed @ artwork.png"
            ])
    }

    @Test func missingIconScalesAreWarnings() {
        let diagnostics = ImageRules.validate(files: ["icon.png": png(38, 38)], pass: minimalPass(.generic))
        #expect(
            problems(diagnostics) == ["warning image.iconScale @ icon@2x.png", "warning image.iconScale @ icon@3x.png"])
        #expect(diagnostics[0].message.contains("76×76"))
    }
}
