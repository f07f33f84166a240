import Testing

@testable import PassModel

/// The one URL rule of order.json (`OrderURLKey`): every URL key of Apple's order format is https, and the
/// table of URL keys names exactly the keys the schema marks as URLs.
@Suite struct OrderURLRuleTests {
    /// The valid order with `text` at the first place `pattern` names (index 0 for "[]").
    func diagnostics(
        setting pattern: String, to text: String, allowsHTTPWebService: Bool = false,
        checkedAt: Double? = nil
    ) throws -> [Diagnostic] {
        var tree = try JSONValue(parsing: validOrder)
        tree.set(.string(text), at: Self.path(pattern))
        return OrderValidator().validate(
            tree,
            options: .init(
                files: orderFiles, allowsHTTPWebService: allowsHTTPWebService,
                checkedAt: checkedAt))
    }

    static func path(_ pattern: String) -> JSONPath {
        var components: [JSONPath.Component] = []
        for part in pattern.split(separator: ".") {
            if part.hasSuffix("[]") {
                components += [.key(String(part.dropLast(2))), .index(0)]
            } else {
                components.append(.key(String(part)))
            }
        }
        return JSONPath(components)
    }

    func errors(_ found: [Diagnostic]) -> [String] { found.filter(\.isError).map { "\($0.rule) @ \($0.keyPath)" } }

    /// The key paths the schema marks `.url`, found by walking it.
    static func schemaURLPatterns(_ schema: OrderObjectSchema, prefix: String = "") -> Set<String> {
        var found: Set<String> = []
        func walk(_ value: OrderValueSchema, _ path: String) {
            switch value {
            case .url: found.insert(path)
            case .object(let object): found.formUnion(schemaURLPatterns(object, prefix: path + "."))
            case .array(let element): walk(element, path + "[]")
            case .fulfillment:
                found.formUnion(schemaURLPatterns(OrderSchema.shippingFulfillment, prefix: path + "."))
                found.formUnion(schemaURLPatterns(OrderSchema.pickupFulfillment, prefix: path + "."))
            default: break
            }
        }
        for key in schema.keys { walk(key.value, prefix + key.name) }
        return found
    }

    @Test func theTableNamesEveryURLKeyOfTheSchemaAndNoOther() {
        let table = Set(OrderURLKey.all.map(\.pattern))
        #expect(table.count == OrderURLKey.all.count)
        #expect(Self.schemaURLPatterns(OrderSchema.order) == table)
        #expect(
            table.isSuperset(of: [
                "orderManagementURL", "merchant.url", "fulfillments[].trackingURL", "returns[].returnManagementURL",
                "returnInfo.returnPolicyURL", "orderProvider.url", "associatedApplications[].launchURL",
            ]))
    }

    /// One rejecting case per scheme and per key: javascript:, data:, vbscript:, plain http: and others.
    @Test(
        arguments: OrderURLKey.all.map(\.pattern),
        [
            "javascript:alert(document.cookie)", "JavaScript://%0Aalert(1)", "data:text/html;base64,PHNjcmlwdD4=",
            "vbscript:msgbox(1)", "http://shop.example.com/orders/1", "ftp://shop.example.com/", "file:///etc/passwd",
            "exampleshop://orders/1",
        ])
    func everyURLKeyRefusesEveryOtherScheme(pattern: String, url: String) throws {
        let found = try diagnostics(setting: pattern, to: url)
        #expect(errors(found) == ["order.url.https @ \(Self.path(pattern))"])
        let message = try #require(found.first { $0.isError }?.message)
        #expect(message.contains("must be https") && message.contains("https://shop.example.com"))
    }

    @Test(arguments: [
        "java\tscript:alert(1)", " https://shop.example.com/", "https://shop.example.com/\n", "/orders/1",
        "shop.example.com/orders", ":x", "https:shop.example.com", "https://", "https:///orders",
        "https:\\\\evil.example", "https://@/x",
    ])
    func aURLThatIsNotAnAbsoluteURLWithAHostIsRefused(url: String) throws {
        let found = try diagnostics(setting: "merchant.url", to: url)
        #expect(errors(found) == ["order.url @ merchant.url"])
    }

    @Test(arguments: [
        "https://shop.example.com", "HTTPS://Shop.Example.com/orders/1?x=1#top", "https://shop.example.com:8443/o",
    ])
    func httpsURLsPass(url: String) throws {
        for key in OrderURLKey.all {
            #expect(errors(try diagnostics(setting: key.pattern, to: url)) == [], "\(key.pattern)")
        }
    }

    @Test func onlyTheWebServiceAcceptsPlainHTTPAndOnlyForDevelopment() throws {
        let production = try diagnostics(setting: "webServiceURL", to: "http://localhost:8080/")
        #expect(errors(production) == ["order.url.https @ webServiceURL"])
        #expect(production.first?.message.contains("--allow-http-web-service") == true)
        let development = try diagnostics(
            setting: "webServiceURL", to: "http://localhost:8080/", allowsHTTPWebService: true)
        #expect(errors(development) == [])
        for key in OrderURLKey.all where key.pattern != "webServiceURL" {
            let found = try diagnostics(
                setting: key.pattern, to: "http://shop.example.com/", allowsHTTPWebService: true)
            #expect(errors(found) == ["order.url.https @ \(Self.path(key.pattern))"])
            #expect(found.first?.message.contains("--allow-http-web-service") == false)
        }
    }

    // MARK: createdAt in the future

    /// 2026-11-20T09:30:00Z, the valid order's createdAt, in seconds since 1970.
    static let createdAt = 1_795_167_000.0

    @Test func aCreatedAtAfterTheMomentCheckedIsAnError() throws {
        var tree = try JSONValue(parsing: validOrder)
        tree.set(.string("2026-11-20T09:30:00Z"), at: ["updatedAt"])
        func check(_ checkedAt: Double?) -> [Diagnostic] {
            OrderValidator().validate(tree, options: .init(files: orderFiles, checkedAt: checkedAt))
        }
        #expect(errors(check(nil)) == [])
        #expect(errors(check(Self.createdAt)) == [])
        let found = check(Self.createdAt - 1)
        #expect(errors(found) == ["order.createdAt.future @ createdAt"])
        #expect(found.first?.message.contains("2026-11-20T09:29:59Z") == true)
        // A time zone counts: 10:30:00+01:00 is the same moment.
        tree.set(.string("2026-11-20T10:30:00.5+01:00"), at: ["createdAt"])
        #expect(errors(check(Self.createdAt + 1)) == ["order.updatedAt @ updatedAt"])
        #expect(errors(check(Self.createdAt)).contains("order.createdAt.future @ createdAt"))
    }

    @Test func momentsAreWrittenAsRFC3339() {
        #expect(OrderValueFormats.rfc3339(secondsSince1970: 0) == "1970-01-01T00:00:00Z")
        #expect(OrderValueFormats.rfc3339(secondsSince1970: Self.createdAt + 0.9) == "2026-11-20T09:30:00Z")
        #expect(OrderValueFormats.rfc3339(secondsSince1970: 951_782_400) == "2000-02-29T00:00:00Z")
        #expect(OrderValueFormats.rfc3339(secondsSince1970: -1) == "1969-12-31T23:59:59Z")
        #expect(OrderValueFormats.rfc3339(secondsSince1970: 4_102_444_799) == "2099-12-31T23:59:59Z")
    }
}
