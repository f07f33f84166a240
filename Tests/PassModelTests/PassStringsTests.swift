import Testing

@testable import PassModel

@Suite struct PassStringsTests {
    func utf16LE(_ text: String, bom: Bool = true) -> [UInt8] {
        (bom ? [0xFF, 0xFE] : []) + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }

    func utf16BE(_ text: String) -> [UInt8] {
        [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    func pairs(_ list: [(key: String, value: String)]) -> [String] { list.map { "\($0.key)=\($0.value)" } }

    @Test func encodesUTF16LEWithBOM() {
        let bytes = PassStrings.encode([("gate", "Puerta"), ("a\"b", "back\\slash\nnew line\ttab")])
        #expect(bytes == utf16LE("\"gate\" = \"Puerta\";\n\"a\\\"b\" = \"back\\\\slash\\nnew line\\ttab\";\n"))
    }

    @Test func roundTrip() throws {
        let original: [(key: String, value: String)] = [
            ("plain", "value"),
            ("quotes \"inside\"", "and \\ backslashes"),
            ("lines", "one\ntwo\r\nthree"),
            ("unicode", "Grüße, 東京, emoji 🎟️"),
            ("control", "bell\u{07}"),
            ("empty", ""),
        ]
        let parsed = try PassStrings.parse(PassStrings.encode(original))
        #expect(pairs(parsed) == pairs(original))
    }

    @Test func parsesUTF8WithAndWithoutBOMAndComments() throws {
        let text = """
            /* Localized strings
               for the pass */
            "gate" = "Puerta"; // trailing comment
            // a line comment
            "seat"="Asiento" ;
            "url" = "https://example.com/a//b"; /* not a comment inside a string: // /* */
            """
        let expected = ["gate=Puerta", "seat=Asiento", "url=https://example.com/a//b"]
        #expect(pairs(try PassStrings.parse(Array(text.utf8))) == expected)
        #expect(pairs(try PassStrings.parse([0xEF, 0xBB, 0xBF] + Array(text.utf8))) == expected)
    }

    @Test func parsesUTF16BigEndianAndLittleEndian() throws {
        let text = "\"key\" = \"Wert ä\";"
        #expect(pairs(try PassStrings.parse(utf16BE(text))) == ["key=Wert ä"])
        #expect(pairs(try PassStrings.parse(utf16LE(text))) == ["key=Wert ä"])
        #expect(pairs(try PassStrings.parse(utf16LE(text, bom: false))) == ["key=Wert ä"])
    }

    @Test func parsesUnicodeEscapesIncludingSurrogatePairs() throws {
        let parsed = try PassStrings.parse(Array(#""k" = "caf\U00e9 \UD83C\UDF9F \'q\'";"#.utf8))
        #expect(pairs(parsed) == ["k=café 🎟 'q'"])
    }

    @Test func emptyFileHasNoPairs() throws {
        #expect(try PassStrings.parse([]).isEmpty)
        #expect(try PassStrings.parse(Array("/* nothing */\n".utf8)).isEmpty)
    }

    @Test(arguments: [
        ("\"a\" = \"b\";\n\"c\" = \"d\"\n\"e\" = \"f\";", 3, "expected ';'"),
        ("\"a\" = \"b\";\n\n\"c\" \"d\";", 3, "expected '='"),
        ("\"a\" = \"b\";\n\"c\" = \"unterminated;\n", 2, "unterminated string"),
        ("\"a\" = \"b\";\n/* open comment\n\n", 2, "unterminated /* comment"),
        ("\"a\" = \"b\";\n\"c\" = \"bad \\q escape\";", 2, "unknown escape \\q"),
        ("\"a\" = b;", 1, "expected the value of \"a\" in double quotes"),
        ("key = \"value\";", 1, "expected a key in double quotes"),
        ("\"a\" = \"\\UD83C x\";", 1, "high surrogate"),
        ("\"a\" = \"\\U12\";", 1, "four hex digits"),
    ])
    func reportsSyntaxErrorsWithLineNumbers(text: String, line: Int, message: String) {
        do {
            _ = try PassStrings.parse(Array(text.utf8))
            Issue.record("expected a parse error")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
        // The same text in UTF-16 reports the same line.
        do {
            _ = try PassStrings.parse(utf16LE(text))
            Issue.record("expected a parse error")
        } catch {
            #expect(error.line == line, "\(error)")
        }
    }

    @Test func reportsColumn() {
        #expect(
            throws: PassStrings.ParseError(
                line: 2, column: 5, message: "expected '=' after the key \"b\"; write \"key\" = \"value\";")
        ) {
            try PassStrings.parse(Array("\"a\" = \"1\";\n\"b\" : \"2\";".utf8))
        }
    }

    @Test func invalidUTF8ReportsItsLine() {
        let bytes = Array("\"a\" = \"b\";\n\"c\" = \"".utf8) + [0xC3, 0x28] + Array("\";".utf8)
        #expect(throws: PassStrings.ParseError.self) { try PassStrings.parse(bytes) }
        do {
            _ = try PassStrings.parse(bytes)
        } catch {
            #expect(error.line == 2)
            #expect(error.message.contains("not valid UTF-8"))
        }
    }

    @Test func oddLengthUTF16IsAnError() {
        #expect(throws: PassStrings.ParseError.self) { try PassStrings.parse([0xFF, 0xFE, 0x22]) }
    }

    @Test func unpairedSurrogateInUTF16IsAnError() {
        // "\"" then a lone high surrogate D800 in UTF-16LE.
        #expect(throws: PassStrings.ParseError.self) {
            try PassStrings.parse([0xFF, 0xFE, 0x22, 0x00, 0x00, 0xD8, 0x22, 0x00])
        }
    }
}

@Suite struct PassStringsEntryTests {
    @Test func entriesKnowWhereTheirKeyAndValueStart() throws {
        let text = "/* c */\n\"a\" = \"1\";\n  \"b\"=\t\"two\";\r\n\"c\" =\n  \"3\";"
        let entries = try PassStrings.entries(Array(text.utf8))
        #expect(entries.map(\.key) == ["a", "b", "c"])
        #expect(
            entries.map { [$0.keyLine, $0.keyColumn, $0.valueLine, $0.valueColumn] } == [
                [2, 1, 2, 7], [3, 3, 3, 8], [4, 1, 5, 3],
            ])
        // UTF-16 gives the same positions.
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(try PassStrings.entries(utf16) == entries)
    }

    @Test func theTableKeepsTheLastValueOfARepeatedKey() throws {
        #expect(try PassStrings.table(Array("\"k\" = \"1\";\n\"k\" = \"2\";".utf8)) == ["k": "2"])
    }

    @Test func languageOfAPath() {
        #expect(PassStrings.language(ofPath: "pt-BR.lproj/pass.strings") == "pt-BR")
        #expect(PassStrings.language(ofPath: "de.lproj/logo.png") == "de")
        #expect(PassStrings.language(ofPath: "pass.json") == nil)
        #expect(PassStrings.language(ofPath: ".lproj/pass.strings") == nil)
    }
}
