import Foundation
import PassModel
import Testing

@testable import PassContent

/// A scratch templates folder for one test, removed afterwards.
final class TemplateFolder {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("passforge-templates-\(UUID().uuidString)")
        .path

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ relative: String, _ text: String) { write(relative, bytes: Array(text.utf8)) }

    func write(_ relative: String, bytes: [UInt8]) {
        let full = "\(path)/\(relative)"
        try? FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: full, contents: Data(bytes))
    }

    func file(_ relative: String) -> String { "\(path)/\(relative)" }

    var loader: TemplateLoader { TemplateLoader(directory: path) }
}

func utf16LE(_ text: String) -> [UInt8] {
    [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
}

/// Checked localization: pass.strings parsed at load, missing translations
/// named by language, placeholders filled in pass.strings values.
@Suite struct LocalizationTests {
    static let passJSON = """
        {
          "description": "Boarding pass",
          "boardingPass": {
            "transitType": "PKTransitTypeAir",
            "primaryFields": [{"key": "gate", "label": "gate_label", "value": "{{ gate }}"}],
            "backFields": [{"key": "note", "label": "note_label", "value": "welcome_text"}]
          }
        }
        """

    func definition(_ yaml: String) -> PassDefinition {
        let (definitions, problems) = ContentLoader.definitions(in: "content/p.yml", bytes: Array(yaml.utf8))
        #expect(problems.isEmpty, "\(problems)")
        return definitions[0]
    }

    @Test func aSyntaxErrorInPassStringsIsAnErrorAtItsLine() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        folder.write(
            "air/de.lproj/pass.strings",
            bytes: utf16LE(
                "/* German */\n\"gate_label\" = \"Flugsteig\";\n\"note_label\" = \"Notiz\"\n\"x\" = \"y\";\n"))
        guard case .failure(let errors) = folder.loader.load("air") else {
            Issue.record("a broken pass.strings was accepted")
            return
        }
        let error = try #require(errors.diagnostics.first)
        #expect(error.rule == "strings.syntax")
        #expect(error.location.file == folder.file("air/de.lproj/pass.strings"))
        #expect(error.location.line == 4 && error.location.column == 1)
        #expect(error.message.contains("expected ';'"))
        #expect(error.description.hasPrefix("\(folder.file("air/de.lproj/pass.strings")):4:1: error:"))
    }

    @Test func aLabelMissingFromOneLanguageIsAWarningNamingIt() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        folder.write(
            "air/de.lproj/pass.strings",
            bytes: utf16LE(
                "\"gate_label\" = \"Flugsteig\";\n\"note_label\" = \"Notiz\";\n\"welcome_text\" = \"Willkommen\";\n"))
        // UTF-8 with a BOM, comments and escapes: all read.
        folder.write(
            "air/fr.lproj/pass.strings",
            bytes: [0xEF, 0xBB, 0xBF]
                + Array("// French\n\"gate_label\" = \"Porte \\\"A\\\"\";\n\"note_label\" = \"Note\";\n".utf8))
        let template = try folder.loader.load("air").get()
        #expect(template.languages == ["de", "fr"])
        #expect(template.localizations.first { $0.language == "fr" }?.entries.first?.value == "Porte \"A\"")
        let warnings = template.warnings.filter { $0.rule == "strings.missing" }
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first)
        #expect(warning.severity == .warning)
        #expect(warning.message.contains("language fr lacks it"))
        #expect(warning.message.contains("\"welcome_text\""))
        #expect(warning.location.file.hasSuffix("air/pass.json") && warning.location.line == 6)
        #expect(warning.keyPath?.description.contains("backFields") == true)
    }

    @Test func everyLanguageHavingEveryKeyGivesNoWarning() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        for language in ["en", "de"] {
            folder.write(
                "air/\(language).lproj/pass.strings",
                "\"gate_label\" = \"G\";\n\"note_label\" = \"N\";\n\"welcome_text\" = \"W\";\n")
        }
        let template = try folder.loader.load("air").get()
        #expect(template.warnings.isEmpty, "\(template.warnings)")
    }

    @Test func placeholdersInPassStringsValuesAreFilledFromTheData() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        folder.write(
            "air/de.lproj/pass.strings",
            bytes: utf16LE(
                "\"gate_label\" = \"Flugsteig\";\n\"note_label\" = \"Notiz\";\n\"welcome_text\" = \"Willkommen, {{ passenger.name }}! Sitz {{ seat }}\";\n"
            ))
        let template = try folder.loader.load("air").get()
        let pass = definition(
            "template: air\nserialNumber: A-1\ndata: { gate: B7, seat: 14, passenger: { name: Jana } }\n")
        let rendered = try PassRenderer(
            configuration: ProjectConfiguration(), boundary: ProjectBoundary(folders: ["/"])
        ).render(pass, template: template).get()
        let strings = try #require(rendered.files.first { $0.name == "de.lproj/pass.strings" })
        #expect(strings.source == "content/p.yml")
        let table = try PassStrings.table(strings.bytes)
        #expect(table["welcome_text"] == "Willkommen, Jana! Sitz 14")
        #expect(table["gate_label"] == "Flugsteig")
        // The template's own file is untouched, for the next pass.
        #expect(
            template.files.first { $0.name == "de.lproj/pass.strings" }.map {
                try? PassStrings.table($0.bytes)["welcome_text"]
            } == "Willkommen, {{ passenger.name }}! Sitz {{ seat }}")
    }

    @Test func aPlaceholderWithNoValueInPassStringsNamesBothFiles() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        folder.write(
            "air/de.lproj/pass.strings",
            "\"gate_label\" = \"G\";\n\"note_label\" = \"N\";\n\n\"welcome_text\" = \"Hallo {{ nickname }}\";\n")
        let template = try folder.loader.load("air").get()
        let pass = definition("template: air\nserialNumber: A-1\ndata: { gate: B7 }\n")
        guard
            case .failure(let errors) = PassRenderer(
                configuration: ProjectConfiguration(), boundary: ProjectBoundary(folders: ["/"])
            ).render(pass, template: template)
        else {
            Issue.record("a missing placeholder value was accepted")
            return
        }
        let error = try #require(errors.diagnostics.first)
        #expect(error.rule == "placeholder.missing")
        #expect(error.location.file == "content/p.yml" && error.location.line == 3)
        #expect(error.message.contains("{{ nickname }}"))
        let note = try #require(error.notes.first)
        #expect(note.location.file == folder.file("air/de.lproj/pass.strings"))
        #expect(note.location.line == 4 && note.location.column == 25)
    }

    @Test func aMalformedPlaceholderInPassStringsIsAnErrorAtItsLine() throws {
        let folder = TemplateFolder()
        folder.write("air/pass.json", Self.passJSON)
        folder.write(
            "air/de.lproj/pass.strings", "\"gate_label\" = \"G\";\n\"welcome_text\" = \"Hallo {{ nick name }}\";\n")
        guard case .failure(let errors) = folder.loader.load("air") else {
            Issue.record("a malformed placeholder was accepted")
            return
        }
        #expect(errors.diagnostics.first?.rule == "placeholder.syntax")
        #expect(errors.diagnostics.first?.location.line == 2)
    }
}
