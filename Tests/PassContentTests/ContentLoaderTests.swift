import PassModel
import Testing

@testable import PassContent

@Suite struct ContentLoaderTests {
    func load(_ text: String, file: String = "content/x.yml") -> ([PassDefinition], [ContentDiagnostic]) {
        let result = ContentLoader.definitions(in: file, bytes: Array(text.utf8))
        return (result.definitions, result.problems)
    }

    @Test func onePassPerFile() {
        let (definitions, problems) = load(
            """
            template: boarding
            serialNumber: BA-1
            data: {seat: 14C}
            pass: {relevantDate: "2026-12-01T09:30:00Z"}
            images: {thumbnail.png: photos/jane.png}
            """)
        #expect(problems.isEmpty)
        let pass = definitions[0]
        #expect(pass.serialNumber == "BA-1")
        #expect(pass.templateName == "boarding")
        #expect(pass.data["seat"]?.stringValue == "14C")
        #expect(pass.images.first?.path == "content/photos/jane.png")
        #expect(pass.serialLocation.line == 2)
    }

    @Test func manyPassesWithDefaultsDeepMerged() {
        let (definitions, problems) = load(
            """
            template: member
            defaults: { data: { tier: Gold, points: 0 } }
            passes:
              - serialNumber: M-1
                data: { name: Ann }
              - serialNumber: M-2
                data: { name: Bo, tier: Silver }
            """)
        #expect(problems.isEmpty)
        #expect(definitions.map(\.serialNumber) == ["M-1", "M-2"])
        #expect(definitions[0].data["tier"]?.stringValue == "Gold")
        #expect(definitions[0].data["points"]?.scalarValue == .int(0))
        #expect(definitions[1].data["tier"]?.stringValue == "Silver")
        #expect(definitions[1].templateName == "member")
        #expect(definitions[1].serialLocation.line == 6)
    }

    @Test(arguments: ["../x", "/", "", "a/b", String(repeating: "a", count: 200), "-lead", "sp ace"])
    func unsafeSerialsAreRejected(serial: String) {
        let (definitions, problems) = load("template: t\nserialNumber: \"\(serial)\"\n")
        #expect(definitions.isEmpty)
        #expect(problems.contains { $0.rule == "content.serial" && $0.location.line == 2 })
    }

    @Test func acceptsTheFullSerialAlphabet() {
        #expect(PassDefinition.isValidSerialNumber("A1._~-z"))
        #expect(PassDefinition.isValidSerialNumber(String(repeating: "a", count: 128)))
        #expect(!PassDefinition.isValidSerialNumber(String(repeating: "a", count: 129)))
    }

    @Test func reportsEveryProblemInAFile() {
        let (_, problems) = load(
            """
            template: t
            passes:
              - serialNumber: ok-1
                colour: red
              - data: {}
              - serialNumber: 12
            """)
        #expect(problems.map(\.rule).sorted() == ["content.required", "content.type", "content.unknown-key"])
    }

    @Test func aNumericSerialSaysToQuoteIt() {
        let (_, problems) = load("template: t\nserialNumber: 1234\n")
        #expect(problems.first?.message.contains("quote it") == true)
    }

    @Test func jsonContentFilesWork() {
        let (definitions, problems) = load(
            #"{"template": "coupon", "serialNumber": "C-1", "download": "public"}"#, file: "content/c.json")
        #expect(problems.isEmpty)
        #expect(definitions.first?.download == .public)
    }

    @Test func imageNamesCannotEscape() {
        let (_, problems) = load("template: t\nserialNumber: A\nimages: {\"../icon.png\": x.png}\n")
        #expect(problems.map(\.rule) == ["content.image-name"])
    }
}

@Suite struct ConfigurationTests {
    @Test func readsDefaultsAndSigning() throws {
        let root = try YAMLSourceParser.parse(
            Array(
                """
                passTypeIdentifier: pass.com.example
                teamIdentifier: ABCDE12345
                signing:
                  pass.com.other: { certificate: certs/other.p12 }
                """.utf8), file: "proj/passforge.yml")
        let config = try ProjectConfiguration.parse(root, file: "proj/passforge.yml")
        #expect(config.defaultValue("teamIdentifier") == "ABCDE12345")
        #expect(config.signing["pass.com.other"]?.certificate == "proj/certs/other.p12")
    }

    @Test func refusesSecrets() throws {
        let root = try YAMLSourceParser.parse(Array("signingPassword: hunter2\n".utf8), file: "passforge.yml")
        #expect {
            _ = try ProjectConfiguration.parse(root, file: "passforge.yml")
        } throws: { error in
            guard let errors = error as? ContentErrors else { return false }
            return errors.diagnostics.first?.rule == "config.secret" && !errors.description.contains("hunter2")
        }
    }
}

@Suite struct MergeTests {
    @Test func objectsMergeArraysReplace() throws {
        let base = try JSONSourceParser.parse(Array(#"{"a": {"x": 1, "y": 2}, "list": [1, 2]}"#.utf8), file: "b.json")
        let top = try JSONSourceParser.parse(Array(#"{"a": {"y": 3}, "list": [9]}"#.utf8), file: "t.json")
        let merged = base.merging(top)
        #expect(
            merged.jsonValue
                == .object(
                    JSONObject([
                        ("a", .object(JSONObject([("x", .int(1)), ("y", .int(3))]))), ("list", .array([.int(9)])),
                    ])))
        #expect(merged.location(at: ["a", "y"]).file == "t.json")
        #expect(merged.location(at: ["a", "x"]).file == "b.json")
    }
}
