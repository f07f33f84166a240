import Testing

@testable import PassModel

/// A PNG header of the given size (what the rules read; no pixels).
func pngHeader(width: Int, height: Int) -> [UInt8] {
    func be(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    let chunk = Array("IHDR".utf8) + be(width) + be(height) + [8, 6, 0, 0, 0]
    return PNGImageInfo.signature + be(13) + chunk + be(Int(CRC32.checksum(chunk[...])))
}

/// A JPEG with only its start-of-frame segment.
func jpegHeader(width: Int, height: Int) -> [UInt8] {
    [
        0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x0B, 0x08,
        UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 0x01, 0x01, 0x11, 0x00,
    ]
}

/// A shipping order and a pickup order that use nearly every key, all correctly.
let validOrder = """
    {
      "schemaVersion": 1,
      "orderTypeIdentifier": "order.com.example.shop",
      "orderIdentifier": "ORD-1001",
      "orderType": "ecommerce",
      "orderNumber": "1001",
      "orderManagementURL": "https://shop.example.com/orders/1001",
      "status": "open",
      "statusDescription": "On its way",
      "createdAt": "2026-11-20T09:30:00Z",
      "updatedAt": "2026-11-21T10:00:00.250+01:00",
      "webServiceURL": "https://orders.example.com/",
      "authenticationToken": "0123456789abcdef0123",
      "changeNotifications": "enabled",
      "merchant": {
        "displayName": "Example Shop", "merchantIdentifier": "merchant.com.example", "url": "https://shop.example.com",
        "logo": "logo", "emailAddress": "help@example.com",
        "address": {"addressLines": ["1 Main St"], "locality": "Springfield", "postalCode": "12345", "countryCode": "US"}
      },
      "customer": {"givenName": "Jane", "familyName": "Appleseed", "emailAddress": "jane@example.com"},
      "associatedApplications": [{"storeIdentifier": 284882215, "launchURL": "https://shop.example.com/app/orders/1001"}],
      "barcode": {"format": "qr", "message": "ORD-1001", "messageEncoding": "iso-8859-1", "altText": "1001"},
      "lineItems": [
        {"title": "Espresso cups", "quantity": 2, "image": "cups.png", "price": {"amount": "24.50", "currency": "USD"}, "sku": "CUP-2"}
      ],
      "fulfillments": [
        {"fulfillmentType": "shipping", "fulfillmentIdentifier": "F-1", "status": "onTheWay", "carrier": "Example Post",
         "trackingNumber": "EP123", "trackingURL": "https://post.example.com/EP123", "shippedAt": "2026-11-21T08:00:00Z",
         "estimatedDeliveryAt": "2026-11-23T09:00:00Z", "estimatedDeliveryWindowDuration": "PT4H", "shippingType": "delivery",
         "recipient": {"givenName": "Jane", "address": {"countryCode": "US"}}},
        {"fulfillmentType": "pickup", "fulfillmentIdentifier": "F-2", "displayName": "Store on Main", "status": "readyForPickup",
         "pickupAt": "2026-11-22T10:00:00-05:00", "pickupWindowDuration": "P1DT2H", "location": {"latitude": 40.7, "longitude": -74.0},
         "barcode": {"format": "code128", "message": "PICK-2", "messageEncoding": "iso-8859-1"}}
      ],
      "payment": {
        "total": {"amount": "54.50", "currency": "USD"}, "status": "paid",
        "summaryItems": [{"label": "Shipping", "value": {"amount": "5.50", "currency": "USD"}}],
        "transactions": [{"amount": {"amount": "54.50", "currency": "USD"}, "createdAt": "2026-11-20T09:30:00Z",
                          "paymentMethod": {"displayName": "Visa 1234"}, "status": "completed", "transactionType": "purchase",
                          "receipt": "receipt.pdf"}]
      },
      "orderProvider": {"displayName": "Platform", "url": "https://platform.example.com",
                        "trackingLogoNameLightColorScheme": "platform-light", "trackingLogoNameDarkColorScheme": "platform-dark"},
      "returnInfo": {"returnPolicyURL": "https://shop.example.com/returns", "returnDeadline": "2026-12-20T00:00:00Z", "displayCountdown": true},
      "returns": [{"returnIdentifier": "R-1", "status": "open", "returnLabel": "label.pdf"}]
    }
    """

let orderFiles: [String: [UInt8]] = [
    "logo.png": pngHeader(width: 300, height: 300), "logo@2x.png": pngHeader(width: 600, height: 600),
    "cups.png": pngHeader(width: 300, height: 300), "fr.lproj/cups.png": jpegHeader(width: 300, height: 300),
    "platform-light.png": pngHeader(width: 300, height: 300), "platform-dark.jpg": jpegHeader(width: 300, height: 300),
    "receipt.pdf": Array("%PDF-1.4".utf8), "label.pdf": Array("%PDF-1.4".utf8),
]

@Suite struct OrderRuleTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

    /// The diagnostics of the valid order with `change` applied to its tree.
    func diagnostics(files: [String: [UInt8]] = orderFiles, _ change: (inout JSONObject) -> Void) throws -> [Diagnostic]
    {
        guard case .object(var root) = try parse(validOrder) else { throw JSONParseFailure() }
        change(&root)
        return OrderValidator().validate(.object(root), options: .init(files: files))
    }

    struct JSONParseFailure: Error {}

    /// Exactly one error, with this rule at this path.
    func expectOne(
        _ rule: String, at path: JSONPath, in found: [Diagnostic], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors = found.filter(\.isError)
        #expect(
            errors.count == 1 && errors.first?.rule == rule && errors.first?.keyPath == path, "\(found)",
            sourceLocation: sourceLocation)
    }

    @Test func theValidOrderHasNoProblems() throws {
        #expect(OrderValidator().validate(try parse(validOrder), options: .init(files: orderFiles)) == [])
    }

    @Test(arguments: [
        "schemaVersion", "orderTypeIdentifier", "orderIdentifier", "orderType", "orderManagementURL", "status",
        "createdAt", "updatedAt", "merchant",
    ])
    func everyRequiredOrderKeyIsRequired(key: String) throws {
        let found = try diagnostics { $0[key] = nil }
        expectOne("order.key.required", at: [.key(key)], in: found)
        #expect(found.first!.message.contains("add \"\(key)\""))
    }

    @Test func requiredKeysOfEveryObjectAreRequired() throws {
        let cases: [(JSONPath, String)] = [
            (["merchant"], "merchantIdentifier"), (["merchant"], "url"), (["merchant"], "displayName"),
            (["lineItems", .index(0)], "title"), (["lineItems", .index(0)], "quantity"),
            (["lineItems", .index(0), "price"], "currency"), (["payment"], "total"), (["payment"], "status"),
            (["payment", "summaryItems", .index(0)], "label"),
            (["payment", "transactions", .index(0)], "paymentMethod"),
            (["payment", "transactions", .index(0), "paymentMethod"], "displayName"),
            (["fulfillments", .index(0)], "fulfillmentIdentifier"), (["fulfillments", .index(1)], "displayName"),
            (["fulfillments", .index(1), "location"], "latitude"), (["barcode"], "messageEncoding"),
            (["associatedApplications", .index(0)], "storeIdentifier"),
            (["orderProvider"], "trackingLogoNameDarkColorScheme"),
            (["returnInfo"], "returnPolicyURL"), (["returns", .index(0)], "returnIdentifier"),
        ]
        for (path, key) in cases {
            let found = try diagnostics { root in
                var value = JSONValue.object(root)
                value.remove(key, at: path)
                root = value.objectValue!
            }
            expectOne("order.key.required", at: path.appending(key), in: found)
        }
    }

    @Test(
        arguments: [
            (JSONPath(["orderType"]), "retail"), (["status"], "closed"),
            (["fulfillments", .index(0), "status"], "shiped"),
            (["fulfillments", .index(1), "status"], "delivered"), (["payment", "status"], "settled"),
            (["barcode", "format"], "PKBarcodeFormatQR"),
            (["payment", "transactions", .index(0), "transactionType"], "chargeback"), (["changeNotifications"], "off"),
            (["returns", .index(0), "status"], "lost"), (["fulfillments", .index(0), "shippingType"], "air"),
        ] as [(JSONPath, String)])
    func everyEnumRejectsOtherValues(path: JSONPath, value: String) throws {
        let found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string(value), at: path)
            root = tree.objectValue!
        }
        expectOne("order.enum", at: path, in: found)
    }

    @Test func aMisspelledStatusGetsAHint() throws {
        let found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string("shiped"), at: ["fulfillments", .index(0), "status"])
            root = tree.objectValue!
        }
        #expect(found.first?.message.contains("Did you mean \"shipped\"?") == true)
    }

    @Test func fulfillmentsNeedAKnownType() throws {
        let found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string("drone"), at: ["fulfillments", .index(0), "fulfillmentType"])
            root = tree.objectValue!
        }
        expectOne("order.fulfillmentType", at: ["fulfillments", .index(0), "fulfillmentType"], in: found)
    }

    @Test(arguments: [
        "2026-11-20", "2026-11-20T09:30Z", "2026-11-20 09:30:00Z", "2026-11-20T09:30:00", "2026-13-20T09:30:00Z",
        "20/11/2026", "2026-11-20T09:30:00+0100",
    ])
    func datesAreRFC3339(text: String) throws {
        let found = try diagnostics {
            $0["createdAt"] = .string(text)
            $0["updatedAt"] = .string("2026-11-21T09:30:00Z")
        }
        expectOne("order.date", at: ["createdAt"], in: found)
    }

    @Test(arguments: ["2H", "P", "PT", "P2H", "PT2D", "P1.5D", "PT-2H", "two hours"])
    func durationsAreISO8601(text: String) throws {
        let found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string(text), at: ["fulfillments", .index(1), "pickupWindowDuration"])
            root = tree.objectValue!
        }
        expectOne("order.duration", at: ["fulfillments", .index(1), "pickupWindowDuration"], in: found)
    }

    @Test func validDurationsPass() {
        for text in ["PT2H", "P1D", "P1DT12H", "PT30M", "PT0.5S", "P1W", "P1Y2M3DT4H5M6S"] {
            #expect(OrderValueFormats.isISO8601Duration(text), "\(text)")
        }
    }

    @Test func currenciesAmountsAndPrecision() throws {
        var found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string("usd"), at: ["payment", "total", "currency"])
            root = tree.objectValue!
        }
        expectOne("order.currency", at: ["payment", "total", "currency"], in: found)
        #expect(found.first?.message.contains("Did you mean \"USD\"?") == true)
        for amount in ["12,50", "$12.50", "1.2.3", "", ".5", "12."] {
            found = try diagnostics { root in
                var tree = JSONValue.object(root)
                tree.set(.string(amount), at: ["payment", "total", "amount"])
                root = tree.objectValue!
            }
            expectOne("order.amount", at: ["payment", "total", "amount"], in: found)
        }
        found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.double(54.5), at: ["payment", "total", "amount"])
            root = tree.objectValue!
        }
        expectOne("key.type", at: ["payment", "total", "amount"], in: found)
        #expect(found.first?.message.contains("put it in quotes") == true)
        found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(
                .object(JSONObject([("amount", .string("500.25")), ("currency", .string("JPY"))])),
                at: ["payment", "total"])
            root = tree.objectValue!
        }
        #expect(found.contains { $0.rule == "order.amount.precision" && $0.severity == .warning })
    }

    @Test func urlsAndTheWebService() throws {
        var found = try diagnostics { $0["webServiceURL"] = .string("http://orders.example.com/") }
        expectOne("order.url.https", at: ["webServiceURL"], in: found)
        found = try diagnostics { $0["orderManagementURL"] = .string("shop.example.com/orders") }
        expectOne("order.url", at: ["orderManagementURL"], in: found)
        found = try diagnostics { $0["authenticationToken"] = nil }
        expectOne("order.authenticationToken", at: ["authenticationToken"], in: found)
        found = try diagnostics { $0["authenticationToken"] = .string("short") }
        expectOne("order.authenticationToken.length", at: ["authenticationToken"], in: found)
    }

    @Test func aDevelopmentBuildAcceptsAnHTTPWebServiceOnly() throws {
        guard case .object(var root) = try parse(validOrder) else { throw JSONParseFailure() }
        root["webServiceURL"] = .string("http://localhost:8080/")
        let development = OrderValidator().validate(
            .object(root), options: .init(files: orderFiles, allowsHTTPWebService: true))
        #expect(development.filter(\.isError).isEmpty, "\(development)")
        // Only the web service: other URLs keep their own rules.
        root["orderManagementURL"] = .string("localhost/orders")
        let other = OrderValidator().validate(
            .object(root), options: .init(files: orderFiles, allowsHTTPWebService: true))
        expectOne("order.url", at: ["orderManagementURL"], in: other)
        let production = OrderValidator().validate(.object(root), options: .init(files: orderFiles))
        #expect(
            production.first { $0.keyPath == ["webServiceURL"] }?.message.contains("--allow-http-web-service") == true)
    }

    @Test func rangesCountryCodesAndTheSchemaVersion() throws {
        var found = try diagnostics { $0["schemaVersion"] = .int(2) }
        expectOne("order.schemaVersion", at: ["schemaVersion"], in: found)
        found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.double(91), at: ["fulfillments", .index(1), "location", "latitude"])
            root = tree.objectValue!
        }
        expectOne("order.number.range", at: ["fulfillments", .index(1), "location", "latitude"], in: found)
        found = try diagnostics { root in
            var tree = JSONValue.object(root)
            tree.set(.string("USA"), at: ["merchant", "address", "countryCode"])
            root = tree.objectValue!
        }
        expectOne("order.countryCode", at: ["merchant", "address", "countryCode"], in: found)
    }

    @Test func updatedAtNeverPrecedesCreatedAt() throws {
        let found = try diagnostics { $0["updatedAt"] = .string("2026-11-19T09:30:00Z") }
        expectOne("order.updatedAt", at: ["updatedAt"], in: found)
    }

    @Test func imagesAndFilesMustBeInThePackage() throws {
        var files = orderFiles
        files["logo.png"] = nil
        files["logo@2x.png"] = nil
        var found = try diagnostics(files: files) { _ in }
        expectOne("order.image", at: ["merchant", "logo"], in: found)
        files = orderFiles
        files["cups.png"] = Array("GIF89a not a png".utf8)
        found = try diagnostics(files: files) { _ in }
        expectOne("order.image", at: ["lineItems", .index(0), "image"], in: found)
        files = orderFiles
        files["logo.png"] = pngHeader(width: 200, height: 100)
        found = try diagnostics(files: files) { _ in }
        #expect(found.count == 1 && found[0].rule == "order.image.size" && found[0].severity == .warning, "\(found)")
        files = orderFiles
        files["receipt.pdf"] = nil
        found = try diagnostics(files: files) { _ in }
        expectOne("order.file", at: ["payment", "transactions", .index(0), "receipt"], in: found)
    }

    @Test func typesAndUnknownKeys() throws {
        var found = try diagnostics { $0["merchant"] = .string("Example Shop") }
        expectOne("key.type", at: ["merchant"], in: found)
        found = try diagnostics { $0["orderStatus"] = .string("open") }
        #expect(found.count == 1 && found[0].rule == "unknown-key" && found[0].severity == .warning)
        found = try diagnostics { $0["statusDescripton"] = .string("x") }
        #expect(found.first?.message.contains("Did you mean \"statusDescription\"?") == true)
        #expect(OrderValidator().validate(.array([])).first?.rule == "json.root")
    }
}

extension JSONValue {
    /// Sets the value at `path` (tests build variants of a fixture with it).
    mutating func set(_ newValue: JSONValue, at path: JSONPath) {
        guard let first = path.components.first else {
            self = newValue
            return
        }
        let rest = JSONPath(Array(path.components.dropFirst()))
        switch (self, first) {
        case (.object(var object), .key(let key)):
            var child = object[key] ?? .null
            child.set(newValue, at: rest)
            object[key] = child
            self = .object(object)
        case (.array(var array), .index(let index)) where index < array.count:
            array[index].set(newValue, at: rest)
            self = .array(array)
        default:
            break
        }
    }

    /// Removes `key` from the object at `path`.
    mutating func remove(_ key: String, at path: JSONPath) {
        guard let first = path.components.first else {
            if case .object(var object) = self {
                object[key] = nil
                self = .object(object)
            }
            return
        }
        let rest = JSONPath(Array(path.components.dropFirst()))
        switch (self, first) {
        case (.object(var object), .key(let name)):
            var child = object[name] ?? .null
            child.remove(key, at: rest)
            object[name] = child
            self = .object(object)
        case (.array(var array), .index(let index)) where index < array.count:
            array[index].remove(key, at: rest)
            self = .array(array)
        default:
            break
        }
    }
}
