import AtomicFiles
import Foundation
import PassContent
import Testing
import TestSupport
@testable import PassBuild

/// A `.pkpasstemplate` bundle made as Apple's Pass Designer saves it builds
/// into passes that verify like any other (unzip, SHA-1s, openssl smime).
@Suite struct DesignerTemplateBuildTests {
    let pki = TestPKI.shared

    @Test func aPassDesignerBundleBuildsIntoValidPasses() throws {
        let project = ProjectFixture(passCount: 0)
        let bundle = "templates/Concert.pkpasstemplate"
        // Pass Designer: JSONEncoder with .prettyPrinted and .sortedKeys, an `_id` in every field, empty identity keys.
        project.directory.write("\(bundle)/pass.json", #"""
        {
          "backgroundColor" : "rgb(30,30,60)",
          "barcodes" : [
            {
              "format" : "PKBarcodeFormatQR",
              "message" : "https:\/\/tickets.example.com\/{{ serialNumber }}",
              "messageEncoding" : "iso-8859-1"
            }
          ],
          "description" : "Concert ticket",
          "eventTicket" : {
            "primaryFields" : [
              {
                "_id" : "6F1C2D3E-0A4B-4C5D-8E9F-0123456789AB",
                "key" : "event",
                "label" : "event_label",
                "value" : "{{ event }}"
              }
            ],
            "secondaryFields" : [
              {
                "_id" : "7A2B3C4D-1B5C-4D6E-9FA0-123456789ABC",
                "key" : "seat",
                "label" : "seat_label",
                "value" : "{{ seat }}"
              }
            ]
          },
          "foregroundColor" : "rgb(255,255,255)",
          "formatVersion" : 1,
          "organizationName" : "",
          "passTypeIdentifier" : "",
          "serialNumber" : "",
          "teamIdentifier" : ""
        }
        """#)
        project.directory.write("\(bundle)/tooling.json", #"{"automaticallyGenerateCompatiblePass":false,"builderVersion":"0.0.1","designerVersion":"1.0"}"#)
        project.directory.write("\(bundle)/icon.png", bytes: PNGFactory.png(width: 38, height: 38))
        project.directory.write("\(bundle)/icon@2x.png", bytes: PNGFactory.png(width: 76, height: 76))
        project.directory.write("\(bundle)/logo.png", bytes: PNGFactory.png(width: 120, height: 40))
        let utf16 = { (text: String) -> [UInt8] in [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
        project.directory.write("\(bundle)/en.lproj/pass.strings", bytes: utf16("\"event_label\" = \"Event\";\n\"seat_label\" = \"Seat\";\n"))
        project.directory.write("\(bundle)/de.lproj/pass.strings", bytes: utf16("\"event_label\" = \"Veranstaltung\";\n\"seat_label\" = \"Sitz\";\n"))
        // Editors commit data, as for any template.
        project.directory.write("content/concert.yml", """
        template: Concert
        passes:
          - serialNumber: JAZZ-1
            data: { event: Jazz Night, seat: A12 }
          - serialNumber: JAZZ-2
            data: { event: Jazz Night, seat: A13 }
        """)
        var settings = BuildSettings(
            contentDirectory: project.directory.file("content"), templatesDirectory: project.directory.file("templates"),
            outputDirectory: project.output, configuration: try ProjectConfiguration.load(file: project.directory.file("passforge.yml")),
            projectStateDirectory: project.directory.file(".passforge"), environment: pki.environment(pki.leaf()))
        settings.jobs = 2
        let report = try PassBuilder(settings: settings).build()
        #expect(report.built.count == 2)
        #expect(!report.warnings.contains { $0.message.contains("_id") }, "\(report.warnings)")
        for record in try BuildState.load(from: project.output).passes.values {
            let verified = try PassVerifier.verify("\(project.output)/\(record.path)", root: pki.root)
            #expect(verified.passJSON["organizationName"] as? String == "passforge tests")
            #expect(verified.passJSON["passTypeIdentifier"] as? String == TestPKI.passType)
            let fields = (verified.passJSON["eventTicket"] as? [String: Any])?["secondaryFields"] as? [[String: Any]]
            #expect(fields?.first?["value"] as? String == (record.serialNumber == "JAZZ-1" ? "A12" : "A13"))
            #expect(fields?.first?["_id"] == nil)
            #expect(verified.files.keys.sorted() == ["de.lproj/pass.strings", "en.lproj/pass.strings", "icon.png", "icon@2x.png",
                                                     "logo.png", "manifest.json", "pass.json", "signature"])
        }

        // The designer saves the bundle again with a new colour: every pass is rebuilt; the data is untouched.
        let json = String(decoding: project.directory.read("\(bundle)/pass.json")!, as: UTF8.self)
        project.directory.write("\(bundle)/pass.json", json.replacingOccurrences(of: "rgb(30,30,60)", with: "rgb(90,10,10)"))
        #expect(try PassBuilder(settings: settings).build().built.count == 2)
    }
}
