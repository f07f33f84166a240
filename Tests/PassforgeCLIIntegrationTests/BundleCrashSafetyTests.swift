import Foundation
import PassBuild
import PassPackage
import TestSupport
import Testing
import WalletTree

/// `.pkpasses` bundles are written like passes: a build killed before its
/// journal leaves the previous bundle; one killed while moving files into
/// place is finished by the next build, bundle included.
@Suite struct BundleCrashSafetyTests {
    let pki = TestPKI.shared

    func writeFamily(_ project: ProjectFixture, points: Int) {
        project.directory.write(
            "content/family.yml",
            """
            template: card
            bundle: family
            passes:
              - serialNumber: F-1
                data: { name: Ann, points: \(points) }
              - serialNumber: F-2
                data: { name: Bo, points: 2 }
            """)
    }

    /// The bundle's path from downloads.csv, and the member pass files' bytes it holds, by entry name.
    func bundle(_ project: ProjectFixture) throws -> (path: String, members: [String: [UInt8]]) {
        let csv = String(decoding: project.directory.read("output/.passforge/downloads.csv") ?? [], as: UTF8.self)
        let row = try #require(csv.split(separator: "\n").first { $0.hasPrefix("bundle,family,") })
        let path = String(row.dropFirst("bundle,family,".count))
        let bytes = try #require(project.directory.read("output/\(path)"))
        return (path, Dictionary(uniqueKeysWithValues: try ZipArchive.read(bytes).map { ($0.name, $0.bytes) }))
    }

    @Test func aKilledBuildKeepsTheOldBundleOrTheNextBuildFinishesTheNewOne() throws {
        let project = ProjectFixture(passCount: 1)
        let env = pki.environment(pki.leaf())
        writeFamily(project, points: 1)
        try #require(try project.passforge(["build"], environment: env).status == 0)
        let before = project.snapshot()
        let old = try bundle(project)

        writeFamily(project, points: 900)
        try killBuild(project, env: env, at: "staged")
        #expect(project.snapshot().filter { !$0.key.hasPrefix(".passforge/staging") } == before)

        try killBuild(project, env: env, at: "applying")
        let next = try project.passforge(["build"], environment: env)
        #expect(next.status == 0, "\(next.output)")
        #expect(next.stderr.contains("finished the previous build"), "\(next.output)")
        let new = try bundle(project)
        #expect(new.path == old.path)
        // The bundle holds the new F-1, byte for byte the pass file, and the unchanged F-2.
        let state = try BuildState.load(from: project.output)
        #expect(
            new.members["F-1.pkpass"]
                == project.directory.read("output/\(state.passes["\(TestPKI.passType)/F-1"]!.path)"))
        #expect(new.members["F-1.pkpass"] != old.members["F-1.pkpass"])
        #expect(new.members["F-2.pkpass"] == old.members["F-2.pkpass"])
        let work = TemporaryDirectory("passforge-bundle-member")
        let member = work.write("F-1.pkpass", bytes: new.members["F-1.pkpass"]!)
        let verified = try PassVerifier.verify(member, root: pki.root)
        let fields = (verified.passJSON["generic"] as? [String: Any])?["secondaryFields"] as? [[String: Any]]
        #expect(fields?.first?["value"] as? Int == 900)
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/.passforge/journal.json"))
    }
}
