import AtomicFiles
import Foundation
import PassContent
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// A `.pkpasstemplate` bundle made as Apple's Pass Designer saves it builds
/// into passes that verify like any other (unzip, SHA-1s, openssl smime).
@Suite struct DesignerTemplateBuildTests {
    let pki = TestPKI.shared

    @Test func aPassDesignerBundleBuildsIntoValidPasses() async throws {
        let project = ProjectFixture(passCount: 0)
        let bundle = "templates/Concert.pkpasstemplate"
        PassDesignerFixture.write(
            bundle: bundle, text: { project.directory.write($0, $1) }, bytes: { project.directory.write($0, bytes: $1) }
        )
        project.directory.write("\(bundle)/icon.png", bytes: PNGFactory.png(width: 38, height: 38))
        project.directory.write("\(bundle)/icon@2x.png", bytes: PNGFactory.png(width: 76, height: 76))
        project.directory.write("\(bundle)/logo.png", bytes: PNGFactory.png(width: 120, height: 40))
        // Editors commit data, as for any template.
        project.directory.write(
            "content/concert.yml",
            """
            template: Concert
            passes:
              - serialNumber: JAZZ-1
                data: { event: Jazz Night, seat: A12 }
              - serialNumber: JAZZ-2
                data: { event: Jazz Night, seat: A13 }
            """)
        var settings = BuildSettings(
            contentDirectory: project.directory.file("content"),
            templatesDirectory: project.directory.file("templates"),
            outputDirectory: project.output,
            configuration: try ProjectConfiguration.load(file: project.directory.file("passforge.yml")),
            projectStateDirectory: project.directory.file(".passforge"), environment: pki.environment(pki.leaf()))
        settings.jobs = 2
        let report = try PassBuilder(settings: settings).build()
        #expect(report.built.count == 2)
        #expect(!report.warnings.contains { $0.message.contains("_id") }, "\(report.warnings)")
        for record in try BuildState.load(from: project.output).passes.values {
            let verified = try await PassVerifier.verifyWithoutBlocking(
                "\(project.output)/\(record.path)", root: pki.root)
            #expect(verified.passJSON["organizationName"] as? String == "passforge tests")
            #expect(verified.passJSON["passTypeIdentifier"] as? String == TestPKI.passType)
            let fields = (verified.passJSON["eventTicket"] as? [String: Any])?["secondaryFields"] as? [[String: Any]]
            #expect(fields?.first?["value"] as? String == (record.identifier == "JAZZ-1" ? "A12" : "A13"))
            #expect(fields?.first?["_id"] == nil)
            #expect(
                verified.files.keys.sorted() == [
                    "de.lproj/pass.strings", "en.lproj/pass.strings", "icon.png", "icon@2x.png",
                    "logo.png", "manifest.json", "pass.json", "signature",
                ])
        }

        // The designer saves the bundle again with a new colour: every pass is rebuilt; the data is untouched.
        let json = String(decoding: project.directory.read("\(bundle)/pass.json")!, as: UTF8.self)
        project.directory.write(
            "\(bundle)/pass.json", json.replacingOccurrences(of: "rgb(30,30,60)", with: "rgb(90,10,10)"))
        #expect(try PassBuilder(settings: settings).build().built.count == 2)
    }
}
