import Foundation
import PassModel
import TestSupport
import Testing

@testable import PassContent

/// `.pkpasstemplate` bundles as Apple's Pass Designer saves them: a folder
/// with pass.json (sorted keys, pretty-printed, escaped slashes, an `_id` in
/// every field, identity keys left empty), tooling.json, images and
/// `.lproj` folders.
@Suite struct DesignerTemplateTests {
    static func writeBundle(in folder: TemplateFolder, name: String = "Concert.pkpasstemplate") {
        PassDesignerFixture.write(bundle: name, text: { folder.write($0, $1) }, bytes: { folder.write($0, bytes: $1) })
        folder.write("\(name)/icon.png", bytes: [0x89, 0x50, 0x4E, 0x47])
    }

    @Test func aBundleIsATemplateNamedWithOrWithoutItsExtension() throws {
        let folder = TemplateFolder()
        Self.writeBundle(in: folder)
        #expect(folder.loader.templateNames() == ["Concert.pkpasstemplate"])
        for name in ["Concert", "Concert.pkpasstemplate"] {
            let template = try folder.loader.load(name).get()
            #expect(template.isDesignerBundle)
            #expect(template.warnings.isEmpty, "\(template.warnings)")
            // tooling.json is the editor's, not the pass's.
            #expect(template.files.map(\.name) == ["de.lproj/pass.strings", "en.lproj/pass.strings", "icon.png"])
            #expect(template.languages == ["de", "en"])
            let json = template.passJSON.jsonValue
            // Pass Designer's `_id` keys and empty identity keys are gone; the rest is kept.
            #expect(!json.serializedString().contains("_id"))
            for key in ["organizationName", "passTypeIdentifier", "serialNumber", "teamIdentifier"] {
                #expect(json[key] == nil)
            }
            #expect(json["description"]?.stringValue == "Concert ticket")
            #expect(
                json["barcodes"]?.arrayValue?.first?["message"]?.stringValue
                    == "https://tickets.example.com/{{ serialNumber }}")
            #expect(template.placeholders.paths.sorted() == ["event", "seat", "serialNumber", "serialNumber"])
        }
    }

    @Test func placeholdersComeFromTheContentFilesData() throws {
        let folder = TemplateFolder()
        Self.writeBundle(in: folder)
        let template = try folder.loader.load("Concert").get()
        let (definitions, problems) = ContentLoader.definitions(
            in: "content/c.yml",
            bytes: Array("template: Concert\nserialNumber: T-1\ndata: { event: Jazz Night, seat: 12 }\n".utf8))
        #expect(problems.isEmpty)
        let configuration = ProjectConfiguration(
            passDefaults: SourceNode(
                json: .object(
                    JSONObject([
                        ("organizationName", .string("Example Hall")), ("passTypeIdentifier", .string("pass.example")),
                        ("teamIdentifier", .string("ABCDE12345")),
                    ])), at: SourceLocation(file: "passforge.yml")))
        let rendered = try PassRenderer(configuration: configuration, boundary: ProjectBoundary(folders: ["/"])).render(
            definitions[0], template: template
        ).get().source.jsonValue
        #expect(rendered["organizationName"]?.stringValue == "Example Hall")
        #expect(rendered["serialNumber"]?.stringValue == "T-1")
        #expect(rendered["eventTicket"]?["secondaryFields"]?.arrayValue?.first?["value"] == .int(12))
        #expect(rendered["barcodes"]?.arrayValue?.first?["message"]?.stringValue == "https://tickets.example.com/T-1")
    }

    @Test func aPDFImageIsAnErrorSayingToExportPNG() throws {
        let folder = TemplateFolder()
        Self.writeBundle(in: folder)
        folder.write("Concert.pkpasstemplate/logo.pdf", bytes: Array("%PDF-1.7".utf8))
        guard case .failure(let errors) = folder.loader.load("Concert") else {
            Issue.record("a PDF image was accepted")
            return
        }
        #expect(errors.diagnostics.map(\.rule) == ["template.designer-pdf"])
        #expect(errors.diagnostics.first?.message.contains("logo.png") == true)
    }

    @Test func aCompatibilityVariantRequestIsAWarning() throws {
        let folder = TemplateFolder()
        Self.writeBundle(in: folder)
        folder.write("Concert.pkpasstemplate/tooling.json", #"{"automaticallyGenerateCompatiblePass":true}"#)
        let template = try folder.loader.load("Concert").get()
        #expect(template.warnings.map(\.rule) == ["template.designer-compatibility"])
    }

    @Test func aFolderAndABundleOfOneNameAreAmbiguous() {
        let folder = TemplateFolder()
        Self.writeBundle(in: folder)
        folder.write("Concert/pass.json", "{}")
        guard case .failure(let errors) = folder.loader.load("Concert") else {
            Issue.record("an ambiguous template name was accepted")
            return
        }
        #expect(errors.diagnostics.map(\.rule) == ["template.ambiguous"])
        // Named in full, the bundle is still found.
        #expect((try? folder.loader.load("Concert.pkpasstemplate").get()) != nil)
    }
}
