import PassModel
import Testing

@testable import PassContent

@Suite struct PlaceholderTests {
    func template(_ json: String) throws -> PlaceholderTemplate {
        let node = try JSONSourceParser.parse(Array(json.utf8), file: "templates/t/pass.json")
        return try PlaceholderTemplate.parse(node).get()
    }

    func data(_ yaml: String) throws -> SourceNode {
        try YAMLSourceParser.parse(Array(yaml.utf8), file: "content/p.yml")
    }

    func render(_ template: PlaceholderTemplate, _ data: SourceNode) -> (SourceNode, [ContentDiagnostic]) {
        var problems: [ContentDiagnostic] = []
        let renderer = PlaceholderRenderer(
            data: data, builtins: ["serialNumber": .scalar(.string("S1"), at: SourceLocation(file: "content/p.yml"))],
            definitionLocation: SourceLocation(file: "content/p.yml", line: 3, column: 1), serialNumber: "S1")
        return (renderer.render(template, problems: &problems), problems)
    }

    @Test func wholeStringPlaceholderKeepsTheType() throws {
        let t = try template(#"{"value": "{{ balance }}", "flag": "{{on}}", "text": "Seat {{ seat }} of {{ count }}"}"#)
        let (node, problems) = render(t, try data("balance: 12.5\non: true\nseat: 14C\ncount: 3\n"))
        #expect(problems.isEmpty)
        #expect(node["value"]?.scalarValue == .double(12.5))
        #expect(node["flag"]?.scalarValue == .bool(true))
        #expect(node["text"]?.stringValue == "Seat 14C of 3")
        // A typed value points at the content line that supplied it.
        #expect(node["value"]?.location.file == "content/p.yml")
    }

    @Test func nestedPathsBuiltinsAndArrays() throws {
        let t = try template(#"{"a": "{{ passenger.name }}", "b": "{{ serialNumber }}", "c": "{{ seats.1 }}"}"#)
        let (node, problems) = render(t, try data("passenger: {name: Jane}\nseats: [1A, 1B]\n"))
        #expect(problems.isEmpty)
        #expect(node["a"]?.stringValue == "Jane")
        #expect(node["b"]?.stringValue == "S1")
        #expect(node["c"]?.stringValue == "1B")
    }

    @Test func missingValueNamesContentAndTemplateLines() throws {
        let t = try template("{\n  \"x\": \"{{ gate }}\",\n  \"y\": \"at {{ time }}\"\n}")
        let (_, problems) = render(t, try data("seat: 1A\n"))
        #expect(problems.count == 2)
        let first = try #require(problems.first)
        #expect(first.rule == "placeholder.missing")
        #expect(first.location == SourceLocation(file: "content/p.yml", line: 3, column: 1))
        #expect(first.notes.first?.location.file == "templates/t/pass.json")
        #expect(first.notes.first?.location.line == 2)
        #expect(first.message.contains("add `gate` under `data:`"))
    }

    @Test func malformedPlaceholdersAreTemplateErrors() throws {
        let node = try JSONSourceParser.parse(
            Array(#"{"a": "{{ bad name }}", "b": "{{ open"}"#.utf8), file: "templates/t/pass.json")
        let errors = try #require(PlaceholderTemplate.parse(node).failure)
        #expect(Set(errors.diagnostics.map(\.rule)) == ["placeholder.syntax", "placeholder.unclosed"])
    }

    @Test func objectInsideTextIsAnError() throws {
        let t = try template(#"{"a": "x {{ obj }}"}"#)
        let (_, problems) = render(t, try data("obj: {k: v}\n"))
        #expect(problems.map(\.rule) == ["placeholder.type"])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
