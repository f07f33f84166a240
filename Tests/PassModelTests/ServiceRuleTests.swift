import Testing

@testable import PassModel

@Suite struct WebServiceRuleTests {
    func pass(url: JSONValue?, token: JSONValue? = "0123456789abcdef") -> JSONValue {
        minimalPass(.storeCard).setting("webServiceURL", url).setting("authenticationToken", token)
    }

    @Test func httpsIsAccepted() {
        #expect(problems(of: pass(url: "https://passes.example.com:8443/wallet/")) == [])
    }

    @Test(arguments: [
        "HTTPS://passes.example.com/", "https://x", "https://passes.example.com/wallet/v2", "https://exämple.com/",
    ])
    func httpsInAnyCaseWithAHostIsAccepted(url: String) {
        #expect(problems(of: pass(url: .string(url))) == [])
    }

    @Test func plainHTTPIsAnErrorByDefault() {
        let diagnostics = validate(pass(url: "http://localhost:8080/"))
        #expect(problems(diagnostics) == ["error webServiceURL.scheme @ webServiceURL"])
        #expect(diagnostics[0].message.contains("use https://"))
        #expect(diagnostics[0].message.contains("--allow-http-web-service"))
    }

    @Test func plainHTTPIsAcceptedWithTheOption() {
        #expect(problems(of: pass(url: "http://localhost:8080/"), allowingHTTP: true) == [])
    }

    @Test(arguments: ["ftp://example.com/", "passes.example.com", ""])
    func otherSchemesAreErrors(url: String) {
        #expect(
            problems(of: pass(url: .string(url)), allowingHTTP: true) == ["error webServiceURL.scheme @ webServiceURL"])
    }

    @Test(arguments: [
        "https://", "https:///path", "https://example.com/?a=1", "https://example.com/#x", "https://exa mple.com/",
        "https://:8443/", "https://exa\u{A0}mple.com/", "https://example.com/\t", "HTTPS://example.com/?",
    ])
    func urlMustBeAPlainBaseURL(url: String) {
        #expect(problems(of: pass(url: .string(url))) == ["error webServiceURL.format @ webServiceURL"])
    }

    @Test func tokenAtLeast16Characters() {
        #expect(
            problems(of: pass(url: "https://example.com/", token: "0123456789abcde")) == [
                "error authenticationToken.length @ authenticationToken"
            ])
    }

    @Test func urlRequiresToken() {
        #expect(
            problems(of: pass(url: "https://example.com/", token: nil)) == [
                "error webService.pair @ authenticationToken"
            ])
    }

    @Test func tokenRequiresURL() {
        #expect(problems(of: pass(url: nil)) == ["error webService.pair @ webServiceURL"])
    }

    @Test func tokenMustBeAString() {
        #expect(
            problems(of: pass(url: "https://example.com/", token: 1_234_567_890_123_456_789)) == [
                "error key.type @ authenticationToken"
            ])
    }
}

@Suite struct AppLaunchRuleTests {
    let base = minimalPass(.coupon).setting("appLaunchURL", "example://open")

    @Test func appLaunchURLRequiresStoreIdentifiers() {
        #expect(problems(of: base) == ["error appLaunchURL.storeIdentifiers @ associatedStoreIdentifiers"])
        #expect(
            problems(of: base.setting("associatedStoreIdentifiers", [])) == [
                "error appLaunchURL.storeIdentifiers @ associatedStoreIdentifiers"
            ])
        #expect(problems(of: base.setting("associatedStoreIdentifiers", [284_882_215, 375_380_948])) == [])
    }

    @Test func storeIdentifiersAreNumbers() {
        let diagnostics = validate(base.setting("associatedStoreIdentifiers", ["284882215"]))
        #expect(problems(diagnostics) == ["error key.type @ associatedStoreIdentifiers[0]"])
        #expect(
            problems(of: base.setting("associatedStoreIdentifiers", "284882215")) == [
                "error key.type @ associatedStoreIdentifiers"
            ])
    }

    @Test func storeIdentifiersArePositiveWholeNumbers() {
        #expect(
            problems(of: base.setting("associatedStoreIdentifiers", [1.5, -3])) == [
                "error associatedStoreIdentifiers.value @ associatedStoreIdentifiers[0]",
                "error associatedStoreIdentifiers.value @ associatedStoreIdentifiers[1]",
            ])
    }
}

@Suite struct OtherKeyRuleTests {
    @Test(arguments: [PassStyle.coupon, .generic, .storeCard])
    func groupingIdentifierOnlyOnEventTicketsAndBoardingPasses(style: PassStyle) {
        #expect(
            problems(of: minimalPass(style).setting("groupingIdentifier", "g")) == [
                "error groupingIdentifier.style @ groupingIdentifier"
            ])
    }

    @Test(arguments: [PassStyle.eventTicket, .boardingPass])
    func groupingIdentifierAllowed(style: PassStyle) {
        #expect(problems(of: minimalPass(style).setting("groupingIdentifier", "g")) == [])
    }

    @Test func voidedMustBeABoolean() {
        let diagnostics = validate(minimalPass(.coupon).setting("voided", "true"))
        #expect(problems(diagnostics) == ["error key.type @ voided"])
        #expect(
            diagnostics[0].message
                == "voided must be a boolean, but it is a string (\"true\"); write true without quotes")
        #expect(problems(of: minimalPass(.coupon).setting("voided", 1)) == ["error key.type @ voided"])
    }

    @Test func otherBooleansAndStrings() {
        let json = minimalPass(.coupon)
            .setting("sharingProhibited", "no")
            .setting("suppressStripShine", 0)
            .setting("logoText", ["x"])
            .setting("userInfo", "x")
        #expect(
            problems(of: json) == [
                "error key.type @ logoText",
                "error key.type @ suppressStripShine",
                "error key.type @ sharingProhibited",
                "error key.type @ userInfo",
            ])
    }

    @Test(arguments: ["backgroundColor", "foregroundColor", "labelColor"])
    func colorsAreRGB(key: String) {
        let diagnostics = validate(minimalPass(.coupon).setting(key, "#3C414C"))
        #expect(problems(diagnostics) == ["error color @ \(key)"])
        #expect(diagnostics[0].message.hasSuffix("so write rgb(60, 65, 76)"))
    }

    @Test(arguments: ["rgb(256, 0, 0)", "rgb(0, 0)", "rgb(1.5, 0, 0)", "rgba(0, 0, 0, 1)", "red", "rgb(-1, 0, 0)"])
    func colorComponentsAre0To255(text: String) {
        #expect(
            problems(of: minimalPass(.coupon).setting("backgroundColor", .string(text))) == [
                "error color @ backgroundColor"
            ])
    }

    @Test func semanticsEventTypeMustBeKnown() {
        let diagnostics = validate(minimalPass(.eventTicket).setting("semantics", ["eventType": "PKEventTypeMovies"]))
        #expect(problems(diagnostics) == ["error semantics.eventType @ semantics.eventType"])
        #expect(diagnostics[0].message.hasSuffix("; use PKEventTypeMovie"))
    }

    @Test func semanticsMustBeAnObject() {
        #expect(problems(of: minimalPass(.eventTicket).setting("semantics", ["x"])) == ["error key.type @ semantics"])
    }
}

@Suite struct NFCRuleTests {
    func nfc(_ value: JSONValue) -> [Diagnostic] { validate(minimalPass(.storeCard).setting("nfc", value)) }

    @Test(arguments: [p256PublicKey, p256CompressedPublicKey])
    func p256KeyIsAccepted(key: String) {
        #expect(problems(nfc(["message": "m", "encryptionPublicKey": .string(key)])) == [])
    }

    @Test func messageRequired() {
        #expect(problems(nfc(["encryptionPublicKey": .string(p256PublicKey)])) == ["error nfc.message @ nfc.message"])
    }

    @Test func messageAtMost64BytesOfUTF8() {
        let key = JSONValue.string(p256PublicKey)
        #expect(
            problems(nfc(["message": .string(String(repeating: "a", count: 64)), "encryptionPublicKey": key])) == [])
        #expect(
            problems(nfc(["message": .string(String(repeating: "a", count: 65)), "encryptionPublicKey": key])) == [
                "error nfc.message.length @ nfc.message"
            ])
        // 33 characters, but 66 bytes.
        let diagnostics = nfc(["message": .string(String(repeating: "é", count: 33)), "encryptionPublicKey": key])
        #expect(problems(diagnostics) == ["error nfc.message.length @ nfc.message"])
        #expect(diagnostics[0].message.contains("66 bytes"))
    }

    @Test func missingKeyIsAnError() {
        let diagnostics = nfc(["message": "m"])
        #expect(problems(diagnostics) == ["error nfc.encryptionPublicKey.missing @ nfc.encryptionPublicKey"])
        #expect(diagnostics[0].message.contains("required"))
    }

    @Test(arguments: [
        ("not base64!", "is not valid base64"),
        ("-----BEGIN PUBLIC KEY-----\n\(p256PublicKey)\n-----END PUBLIC KEY-----", "is a PEM block"),
        ("AAAA", "not to a DER SubjectPublicKeyInfo"),
        (rsaPublicKey, "1.2.840.113549.1.1.1"),
        (p384PublicKey, "1.3.132.0.34"),
        (String(p256PublicKey.prefix(40)), "not to a DER SubjectPublicKeyInfo"),
    ])
    func keyMustBeBase64P256SubjectPublicKeyInfo(key: String, reason: String) {
        let diagnostics = nfc(["message": "m", "encryptionPublicKey": .string(key)])
        #expect(problems(diagnostics) == ["error nfc.encryptionPublicKey @ nfc.encryptionPublicKey"])
        #expect(diagnostics.first?.message.contains(reason) == true, "\(diagnostics)")
    }

    @Test func requiresAuthenticationIsABoolean() {
        #expect(
            problems(
                nfc(["message": "m", "encryptionPublicKey": .string(p256PublicKey), "requiresAuthentication": "yes"]))
                == ["error key.type @ nfc.requiresAuthentication"])
    }

    @Test func nfcMustBeAnObject() {
        #expect(problems(nfc("m")) == ["error key.type @ nfc"])
    }
}
