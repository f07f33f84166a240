import Testing

@testable import PassModel

@Suite struct ValidPassTests {
    @Test(arguments: PassStyle.allCases)
    func fullPassOfEachStyleHasNoDiagnostics(style: PassStyle) {
        #expect(problems(of: validPass(style)) == [])
    }

    @Test(arguments: PassStyle.allCases)
    func minimalPassOfEachStyleHasNoDiagnostics(style: PassStyle) {
        #expect(problems(of: minimalPass(style)) == [])
    }

    @Test func validatorReportsEveryProblemNotJustTheFirst() {
        let pass = validPass(.boardingPass)
            .setting("formatVersion", 2)
            .setting("teamIdentifier", "abc")
            .setting("boardingPass.transitType", "plane")
            .setting("barcodes[0].format", "QR")
            .setting("backgroundColor", "#ff0000")
        #expect(
            problems(of: pass) == [
                "error formatVersion @ formatVersion",
                "error teamIdentifier.format @ teamIdentifier",
                "error barcode.format @ barcodes[0].format",
                "error transitType.value @ boardingPass.transitType",
                "error color @ backgroundColor",
            ])
    }

    /// A pass that breaks most rules at once.
    var brokenPass: JSONValue {
        validPass(.eventTicket)
            .setting("formatVersion", "1").setting("serialNumber", "a b").setting("passTypeIdentifier", "x")
            .setting("teamIdentifier", "abc").setting("organizationName", "").setting("coupon", [:])
            .setting("eventTicket.transitType", "bus").setting("eventTicket.primaryFields[0].textAlignment", "middle")
            .setting(
                "eventTicket.primaryFields[1]", ["key": "event", "value": true, "changeMessage": "changed", "row": 3]
            )
            .setting(
                "eventTicket.secondaryFields[1]",
                [
                    "value": "x", "dateStyle": "long", "numberStyle": "PKNumberStyleDecimal", "currencyCode": "eur",
                    "attributedValue": "<b>x</b>", "dataDetectorTypes": ["phone"], "isRelative": "no",
                ]
            )
            .setting("eventTicket.headerFields", fields(4, prefix: "h"))
            .setting("barcodes[1]", ["format": "PKBarcodeFormatCode128"]).setting("barcode", ["format": "qr"])
            .setting("locations", [["latitude": 100], "x"]).setting("beacons", [["proximityUUID": "u", "major": -1]])
            .setting("maxDistance", 0).setting("voided", "false").setting("backgroundColor", "blue")
            .setting("relevantDate", "2026-01-01").setting(
                "relevantDates", [[:], ["startDate": "2026-01-01T00:00Z", "endDate": "2026-01-03T00:00Z"]]
            )
            .setting("webServiceURL", "http://x/").setting("appLaunchURL", "x://")
            .setting(
                "nfc",
                ["message": .string(String(repeating: "x", count: 70)), "encryptionPublicKey": .string(rsaPublicKey)]
            )
            .setting("semantics.eventType", "concert").setting("colour", "x")
    }

    @Test func everyDiagnosticSaysWhatIsWrongAndWhatToDo() {
        let diagnostics = validate(brokenPass)
        #expect(diagnostics.count >= 40, "\(problems(diagnostics))")
        #expect(Set(diagnostics.map(\.rule)).count >= 35)
        for diagnostic in diagnostics {
            let message = diagnostic.message
            #expect(message.contains("; ") || message.contains(". "), "message should say what to do: \(message)")
            #expect(!message.hasSuffix(" "), "\(message)")
        }
    }
}
