import PassModel
import Testing

/// Rules on localizable text check what each language shows, and a
/// distributed pass is judged by what Wallet does (guidance as warnings).
@Suite struct LocalizedRuleTests {
    func pass(changeMessage: String, extra: String = "") throws -> JSONValue {
        try JSONValue(
            parsing: """
                {"formatVersion": 1, "passTypeIdentifier": "pass.com.example", "serialNumber": "S1", "teamIdentifier": "A1B2C3D4E5",
                 "organizationName": "O", "description": "D"\(extra),
                 "boardingPass": {"transitType": "PKTransitTypeAir",
                   "primaryFields": [{"key": "seat", "value": "12A", "changeMessage": "\(changeMessage)"}]}}
                """)
    }

    func rules(_ diagnostics: [Diagnostic]) -> [String] { diagnostics.filter(\.isError).map(\.rule) }

    @Test func changeMessageKeyIsResolvedThroughPassStrings() throws {
        let json = try pass(changeMessage: "seatchangeMessage")
        #expect(rules(PassValidator().validate(json)) == ["field.changeMessage"])
        let strings = [
            "en": ["seatchangeMessage": "Seat number changed to %@"], "de": ["seatchangeMessage": "Sitzplatz: %@"],
        ]
        #expect(rules(PassValidator().validate(json, options: .init(localizations: strings))) == [])
        let german = ["de": ["seatchangeMessage": "Sitzplatz geändert"]]
        let diagnostics = PassValidator().validate(json, options: .init(localizations: german)).filter(\.isError)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.message.contains("in de.lproj/pass.strings: \"Sitzplatz geändert\"") == true)
        #expect(PassValidator.checksLocalizedText(in: json))
    }

    @Test func attributedValueKeyIsResolvedThroughPassStrings() throws {
        let json = try JSONValue(
            parsing: """
                {"formatVersion": 1, "passTypeIdentifier": "pass.com.example", "serialNumber": "S1", "teamIdentifier": "A1B2C3D4E5",
                 "organizationName": "O", "description": "D",
                 "generic": {"backFields": [{"key": "k", "value": "v", "attributedValue": "linkText"}]}}
                """)
        #expect(PassValidator.checksLocalizedText(in: json))
        #expect(rules(PassValidator().validate(json)) == [])
        let strings = ["fr": ["linkText": "<b>Voir</b> <a href='https://example.com'>ici</a>"]]
        let diagnostics = PassValidator().validate(json, options: .init(localizations: strings)).filter(\.isError)
        #expect(diagnostics.map(\.rule) == ["field.attributedValue"])
        #expect(diagnostics.first?.message.contains("(in fr.lproj/pass.strings) contains <b>, but Wallet") == true)
    }

    @Test func hexColoursAndAlignmentAreErrorsForOwnContentAndWarningsForDistributedPasses() throws {
        let json = try JSONValue(
            parsing: """
                {"formatVersion": 1, "passTypeIdentifier": "pass.com.example", "serialNumber": "S1", "teamIdentifier": "A1B2C3D4E5",
                 "organizationName": "O", "description": "D", "backgroundColor": "#1595d7",
                 "generic": {"primaryFields": [{"key": "k", "value": "v", "textAlignment": "PKTextAlignmentCenter"}]}}
                """)
        #expect(Set(rules(PassValidator().validate(json))) == ["color", "field.textAlignment.placement"])
        let distributed = PassValidator().validate(json, options: .init(audience: .distributedPass))
        #expect(rules(distributed) == [])
        #expect(
            Set(distributed.filter { !$0.isError }.map(\.rule)).isSuperset(of: [
                "color", "field.textAlignment.placement",
            ]))
        // A colour Wallet cannot read stays an error for both.
        let blue = try JSONValue(parsing: #"{"backgroundColor": "blue"}"#)
        #expect(rules(PassValidator().validate(blue, options: .init(audience: .distributedPass))).contains("color"))
    }

    @Test func keysWalletIgnoresWhereTheyAreAreWarningsForDistributedPasses() throws {
        let json = try JSONValue(
            parsing: """
                {"formatVersion": 1, "passTypeIdentifier": "pass.com.example", "serialNumber": "S1", "teamIdentifier": "A1B2C3D4E5",
                 "organizationName": "O", "description": "D", "groupingIdentifier": "g",
                 "generic": {"transitType": "PKTransitTypeAir",
                   "primaryFields": [{"key": "k", "value": "v", "dataDetectorTypes": ["PKDataDetectorTypeLink"]}],
                   "auxiliaryFields": [{"key": "a", "value": "v", "row": 1}]}}
                """)
        let expected: Set = [
            "transitType.forbidden", "field.dataDetectorTypes.placement", "field.row.placement",
            "groupingIdentifier.style",
        ]
        #expect(Set(rules(PassValidator().validate(json))) == expected)
        let distributed = PassValidator().validate(json, options: .init(audience: .distributedPass))
        #expect(rules(distributed) == [])
        #expect(Set(distributed.map(\.rule)).isSuperset(of: expected))
    }
}
