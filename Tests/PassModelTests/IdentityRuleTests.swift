import Testing

@testable import PassModel

@Suite struct IdentityRuleTests {
    @Test func rootMustBeAnObject() {
        #expect(problems(of: [1, 2]) == ["error json.root @ (top level)"])
    }

    @Test(arguments: [
        "formatVersion", "passTypeIdentifier", "serialNumber", "teamIdentifier", "organizationName", "description",
    ])
    func requiredKeyMissing(key: String) {
        let diagnostics = validate(minimalPass(.generic).setting(key, nil))
        #expect(problems(diagnostics) == ["error key.required @ \(key)"])
        #expect(diagnostics[0].message.contains("\"\(key)\" is missing; add"))
    }

    @Test func requiredKeyOfWrongType() {
        let diagnostics = validate(minimalPass(.generic).setting("serialNumber", 42))
        #expect(problems(diagnostics) == ["error key.type @ serialNumber"])
        #expect(
            diagnostics[0].message == "serialNumber must be a string, but it is a number (42); put it in quotes: \"42\""
        )
    }

    @Test func emptyOrganizationNameIsAWarning() {
        #expect(
            problems(of: minimalPass(.generic).setting("organizationName", " ")) == [
                "warning key.empty @ organizationName"
            ])
    }

    @Test(arguments: [JSONValue.int(2), .string("1"), .double(1.5)])
    func formatVersionMustBeOne(version: JSONValue) {
        let diagnostics = validate(minimalPass(.coupon).setting("formatVersion", version))
        #expect(problems(diagnostics) == ["error formatVersion @ formatVersion"])
    }

    @Test func formatVersionAsStringSaysToRemoveQuotes() {
        let diagnostics = validate(minimalPass(.coupon).setting("formatVersion", "1"))
        #expect(diagnostics.first?.message.contains("remove the quotes") == true)
    }

    @Test(arguments: [
        ("", "is empty"),
        ("-abc", "starts with '-'"),
        ("has space", "contains a space"),
        ("a/b", "contains '/'"),
        ("ü1", "starts with 'ü'"),
        (String(repeating: "a", count: 129), "has 129 characters"),
    ])
    func serialNumberPattern(serial: String, reason: String) {
        let diagnostics = validate(minimalPass(.generic).setting("serialNumber", .string(serial)))
        #expect(problems(diagnostics) == ["error serialNumber.format @ serialNumber"])
        #expect(diagnostics.first?.message.contains(reason) == true, "\(diagnostics)")
    }

    @Test(arguments: ["A", "a.b_c~d-e", String(repeating: "9", count: 128)])
    func serialNumberPatternAccepts(serial: String) {
        #expect(problems(of: minimalPass(.generic).setting("serialNumber", .string(serial))) == [])
    }

    @Test(arguments: [
        "pass.com/example", "pass..example", "pass.example.", "tickets", "pass.com.exa mple", "../pass.x", "",
        "pass.", "pass..", "pass.com_example", "pass.com.exämple", "pass.com.example\n", "pass.com.ex\u{0}ample",
    ])
    func passTypeIdentifierMustBeReverseDNSAndPathSafe(identifier: String) {
        #expect(
            problems(of: minimalPass(.generic).setting("passTypeIdentifier", .string(identifier))) == [
                "error passTypeIdentifier.format @ passTypeIdentifier"
            ])
    }

    @Test(arguments: ["pass.x", "pass.com.example.tickets", "pass.COM.Example-2.a1", "pass.-.x"])
    func passTypeIdentifierPatternAccepts(identifier: String) {
        #expect(problems(of: minimalPass(.generic).setting("passTypeIdentifier", .string(identifier))) == [])
    }

    @Test func passTypeIdentifierWithoutPassPrefixIsAWarning() {
        #expect(
            problems(of: minimalPass(.generic).setting("passTypeIdentifier", "com.example.tickets")) == [
                "warning passTypeIdentifier.prefix @ passTypeIdentifier"
            ])
    }

    @Test(arguments: ["A1B2C3D4E", "A1B2C3D4E5F", "a1b2c3d4e5", "A1B2C3D4-5"])
    func teamIdentifierIsTenUpperCaseAlphanumerics(team: String) {
        #expect(
            problems(of: minimalPass(.generic).setting("teamIdentifier", .string(team))) == [
                "error teamIdentifier.format @ teamIdentifier"
            ])
    }

    @Test func lowerCaseTeamIdentifierSuggestsUpperCase() {
        let diagnostics = validate(minimalPass(.generic).setting("teamIdentifier", "a1b2c3d4e5"))
        #expect(diagnostics.first?.message.contains("write it in upper case: A1B2C3D4E5") == true)
    }
}

@Suite struct UnknownKeyTests {
    @Test func unknownTopLevelKeyIsAWarningWithSuggestion() {
        let diagnostics = validate(minimalPass(.generic).setting("serialNumbr", "x"))
        #expect(problems(diagnostics) == ["warning unknown-key @ serialNumbr"])
        let message = diagnostics[0].message
        #expect(message.contains("\"serialNumbr\""))
        #expect(message.contains("passed through as is"))
        #expect(message.contains("Did you mean \"serialNumber\"?"))
    }

    @Test func unknownKeyFarFromAnyKnownKeyHasNoSuggestion() {
        let diagnostics = validate(minimalPass(.generic).setting("x-internal-id", 7))
        #expect(problems(diagnostics) == ["warning unknown-key @ x-internal-id"])
        #expect(!diagnostics[0].message.contains("Did you mean"))
    }

    @Test func transposedLettersCountAsOneEdit() {
        let pass = minimalPass(.generic).setting("generic.primaryFields", [["key": "a", "value": "b", "lable": "c"]])
        let diagnostics = validate(pass)
        #expect(problems(diagnostics) == ["warning unknown-key @ generic.primaryFields[0].lable"])
        #expect(diagnostics[0].message.contains("Did you mean \"label\"?"))
    }

    @Test func unknownKeysInNestedObjectsAreWarnings() {
        let pass = validPass(.boardingPass)
            .setting("boardingPass.colour", "x")
            .setting("barcodes[0].alttext", "x")
            .setting("locations[0].lat", 1)
            .setting("beacons[0].mayor", 1)
            .setting("nfc.messages", "x")
            .setting("relevantDates[1].dates", "x")
        #expect(
            problems(of: pass) == [
                "warning unknown-key @ barcodes[0].alttext",
                "warning unknown-key @ boardingPass.colour",
                "warning unknown-key @ relevantDates[1].dates",
                "warning unknown-key @ locations[0].lat",
                "warning unknown-key @ beacons[0].mayor",
                "warning unknown-key @ nfc.messages",
            ])
    }

    @Test func unknownSemanticTagIsAWarningWithASuggestion() {
        #expect(
            problems(of: minimalPass(.generic).setting("semantics", ["anythingAtAll": [1, 2]])) == [
                "warning unknown-key @ semantics.anythingAtAll"
            ])
        let diagnostics = validate(minimalPass(.eventTicket).setting("semantics", ["evenName": "x"]))
        #expect(problems(diagnostics) == ["warning unknown-key @ semantics.evenName"])
        #expect(diagnostics[0].message.contains("Did you mean \"eventName\"?"))
    }

    @Test func unknownKeysAreKeptByTheModel() throws {
        let json = minimalPass(.generic).setting("x-custom", ["a": 1])
        let pass = try Pass(json: json)
        #expect(pass.additionalProperties["x-custom"] == ["a": 1])
        #expect(pass.json["x-custom"] == ["a": 1])
    }
}
