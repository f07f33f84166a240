import PassModel
import Testing

@testable import PassContent

@Suite struct JSONSourceParserTests {
    @Test func recordsLineAndColumnOfEveryValue() throws {
        let text = "{\n  \"a\": 1,\n  \"b\": [true, \"x\"]\n}"
        let node = try JSONSourceParser.parse(Array(text.utf8), file: "t.json")
        #expect(node["a"]?.location == SourceLocation(file: "t.json", line: 2, column: 8))
        #expect(node.location(at: ["b", .index(1)]) == SourceLocation(file: "t.json", line: 3, column: 15))
        #expect(node.jsonValue == .object(JSONObject([("a", .int(1)), ("b", .array([.bool(true), .string("x")]))])))
    }

    @Test func keepsKeyOrderAndTypes() throws {
        let node = try JSONSourceParser.parse(Array(#"{"z": 1.5, "a": null, "m": "\u00e9\n"}"#.utf8), file: "t.json")
        #expect(node.members?.map(\.key) == ["z", "a", "m"])
        #expect(node["z"]?.scalarValue == .double(1.5))
        #expect(node["a"]?.scalarValue == .null)
        #expect(node["m"]?.stringValue == "é\n")
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, "trailing comma"),
        ("{\"a\": 1\n\"b\": 2}", 2, "expected ','"),
        ("{\"a\": \"open", 1, "never closed"),
        ("{\"a\": 1, \"a\": 2}", 1, "appears twice"),
        ("[1, 2", 1, "ends inside an array"),
        ("{} x", 1, "after the end"),
    ])
    func rejectsMalformedJSONWithLocation(text: String, line: Int, fragment: String) {
        #expect {
            _ = try JSONSourceParser.parse(Array(text.utf8), file: "bad.json")
        } throws: { error in
            guard let diagnostic = error as? ContentDiagnostic else { return false }
            return diagnostic.location.file == "bad.json" && diagnostic.location.line == line
                && diagnostic.message.contains(fragment)
        }
    }

    @Test func aDuplicateKeyHasItsOwnRule() {
        #expect {
            _ = try JSONSourceParser.parse(Array("{\"a\": 1, \"a\": 2}".utf8), file: "dup.json")
        } throws: { ($0 as? ContentDiagnostic)?.rule == "json.duplicate-key" }
        #expect {
            _ = try JSONSourceParser.parse(Array("{\"a\": 1,}".utf8), file: "comma.json")
        } throws: { ($0 as? ContentDiagnostic)?.rule == "json.syntax" }
    }

    @Test func refusesHostileNesting() {
        let text = String(repeating: "[", count: 10_000)
        #expect(throws: ContentDiagnostic.self) { _ = try JSONSourceParser.parse(Array(text.utf8), file: "deep.json") }
    }
}

@Suite struct YAMLSourceParserTests {
    @Test func typesScalarsLikeAnEditorExpects() throws {
        let yaml = """
            seat: 14C
            count: 42
            price: 9.5
            ok: true
            quoted: "0042"
            when: 2026-12-01T09:30:00Z
            empty: ~
            country: NO
            hex: 0x1F
            exp: 1e3
            version: 1.2.3
            """
        let node = try YAMLSourceParser.parse(Array(yaml.utf8), file: "p.yml")
        #expect(node["seat"]?.scalarValue == .string("14C"))
        #expect(node["count"]?.scalarValue == .int(42))
        #expect(node["price"]?.scalarValue == .double(9.5))
        #expect(node["ok"]?.scalarValue == .bool(true))
        #expect(node["quoted"]?.scalarValue == .string("0042"))
        #expect(node["when"]?.scalarValue == .string("2026-12-01T09:30:00Z"))
        #expect(node["empty"]?.scalarValue == .null)
        // YAML 1.2: the Norway problem does not exist.
        #expect(node["country"]?.scalarValue == .string("NO"))
        #expect(node["hex"]?.scalarValue == .int(31))
        #expect(node["exp"]?.scalarValue == .double(1000))
        #expect(node["version"]?.scalarValue == .string("1.2.3"))
        #expect(node["count"]?.location == SourceLocation(file: "p.yml", line: 2, column: 8))
    }

    @Test func malformedYAMLNamesTheLine() {
        let yaml = "template: boarding\ndata:\n  seat: [14C\n"
        #expect {
            _ = try YAMLSourceParser.parse(Array(yaml.utf8), file: "bad.yml")
        } throws: { error in
            guard let diagnostic = error as? ContentDiagnostic else { return false }
            return diagnostic.location.file == "bad.yml" && diagnostic.location.line >= 3
                && diagnostic.rule == "yaml.syntax"
        }
    }

    @Test func duplicateKeysAreAnError() {
        #expect(throws: ContentDiagnostic.self) {
            _ = try YAMLSourceParser.parse(Array("a: 1\na: 2\n".utf8), file: "dup.yml")
        }
    }

    @Test func aliasesWork() throws {
        let node = try YAMLSourceParser.parse(Array("a: &x [1, 2]\nb: *x\n".utf8), file: "alias.yml")
        #expect(node["b"]?.jsonValue == .array([.int(1), .int(2)]))
    }

    @Test func aliasBombsAreRefused() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...8 {
            yaml +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                + "]\n"
        }
        #expect {
            _ = try YAMLSourceParser.parse(Array(yaml.utf8), file: "bomb.yml", maximumNodeCount: 50_000)
        } throws: { ($0 as? ContentDiagnostic)?.rule == "yaml.size" }
    }
}
