import AtomicFiles
import Foundation
import PassContent
import PassPackage
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// `.pkpasses` bundles: built from a content file with `bundle:`, read back
/// with `unzip` and every member checked with `openssl smime -verify`.
@Suite struct PassBundleTests {
    static let secret = "bundle-token-secret-0123456789"
    let pki = TestPKI.shared

    func settings(_ project: ProjectFixture) throws -> BuildSettings { try project.buildSettings(secret: Self.secret) }

    /// A family of `count` tickets in one file with `bundle: family`.
    func writeFamily(
        _ project: ProjectFixture, count: Int, name: String = "family", points: Int = 1, file: String = "family.yml"
    ) {
        var yaml = "template: card\nbundle: \(name)\npasses:\n"
        for i in 0..<count {
            yaml +=
                "  - serialNumber: \(name.uppercased())-\(i)\n    data: { name: \"Member \(i)\", points: \(i == 0 ? points : i) }\n"
        }
        project.directory.write("content/\(file)", yaml)
    }

    func bundleRecord(_ project: ProjectFixture, _ name: String = "family") throws -> PassBundles.Record {
        try #require(PassBundles.load(from: project.output)[name])
    }

    /// Unzips the bundle with `unzip` and verifies every member like a device.
    func verifiedMembers(_ project: ProjectFixture, _ record: PassBundles.Record) throws -> [String: PassVerifier
        .Verified]
    {
        let work = TemporaryDirectory("passforge-bundle")
        let unzip = try runProcess("unzip", ["-q", "\(project.output)/\(record.downloadPath)", "-d", work.path])
        #expect(unzip.status == 0, "\(unzip.output)")
        let names = try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
        var verified: [String: PassVerifier.Verified] = [:]
        for name in names {
            #expect(name.hasSuffix(".pkpass"))
            verified[name] = try PassVerifier.verify(work.file(name), root: pki.root)
        }
        return verified
    }

    @Test func aBundleHoldsEveryPassOfItsFileSignedAndIsListed() throws {
        let project = ProjectFixture(passCount: 1)
        writeFamily(project, count: 3)
        _ = try PassBuilder(settings: try settings(project)).build()
        let record = try bundleRecord(project)
        #expect(record.downloadPath.hasPrefix("download/") && record.downloadPath.hasSuffix(".pkpasses"))
        #expect(record.members == ["FAMILY-0", "FAMILY-1", "FAMILY-2"].map { "\(TestPKI.passType)/\($0)" })
        let members = try verifiedMembers(project, record)
        #expect(members.keys.sorted() == ["FAMILY-0.pkpass", "FAMILY-1.pkpass", "FAMILY-2.pkpass"])
        #expect(members["FAMILY-1.pkpass"]?.passJSON["serialNumber"] as? String == "FAMILY-1")
        // Each member is byte for byte the pass served alone.
        let state = try BuildState.load(from: project.output)
        let entries = try ZipArchive.read(try #require(project.directory.read("output/\(record.downloadPath)")))
        for entry in entries {
            let serial = String(entry.name.dropLast(".pkpass".count))
            #expect(
                entry.bytes == project.directory.read("output/\(state.passes["\(TestPKI.passType)/\(serial)"]!.path)"))
        }
        // Its capability is derived from the name, with its own HMAC input, never a pass's.
        let capability = PassBundles.capability(name: "family", secret: TokenSecret(Self.secret, origin: "test"))
        #expect(record.downloadPath == "download/\(capability).pkpasses")
        #expect(!state.passes.values.contains { $0.downloadPath.contains(capability) })
        let csv = String(decoding: project.directory.read("output/.passforge/downloads.csv") ?? [], as: UTF8.self)
        #expect(csv.contains("\nbundle,family,\(record.downloadPath)\n"))
        #expect(csv.contains("\(TestPKI.passType),FAMILY-0,download/"))
    }

    @Test func aBundleIsRebuiltWhenAMemberChangesAndOnlyThen() throws {
        let project = ProjectFixture(passCount: 1)
        writeFamily(project, count: 2)
        let settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let first = try bundleRecord(project)
        let firstBytes = project.directory.read("output/\(first.downloadPath)")

        // Another file changes: the bundle keeps its bytes and record.
        project.writeList(count: 1, points: { _ in 77 })
        let other = try PassBuilder(settings: settings).build()
        #expect(other.built == ["\(TestPKI.passType)/C-0000"])
        #expect(try bundleRecord(project) == first)
        #expect(project.directory.read("output/\(first.downloadPath)") == firstBytes)

        // A member changes: the bundle is made again, at the same URL, holding the new pass.
        writeFamily(project, count: 2, points: 500)
        _ = try PassBuilder(settings: settings).build()
        let second = try bundleRecord(project)
        #expect(second.downloadPath == first.downloadPath)
        #expect(second.etag != first.etag && second.updateTag > first.updateTag)
        let members = try verifiedMembers(project, second)
        let fields =
            (members["FAMILY-0.pkpass"]?.passJSON["generic"] as? [String: Any])?["secondaryFields"] as? [[String: Any]]
        #expect(fields?.first?["value"] as? Int == 500)

        // A member added, then the bundle removed from the file: the file goes from the tree.
        writeFamily(project, count: 3, points: 500)
        _ = try PassBuilder(settings: settings).build()
        #expect(try bundleRecord(project).members.count == 3)
        project.directory.write(
            "content/family.yml",
            "template: card\npasses:\n  - serialNumber: FAMILY-0\n    data: { name: A, points: 1 }\n")
        _ = try PassBuilder(settings: settings).build()
        #expect(PassBundles.load(from: project.output).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/\(first.downloadPath)"))
        let csv = String(decoding: project.directory.read("output/.passforge/downloads.csv") ?? [], as: UTF8.self)
        #expect(!csv.contains("bundle,"))
    }

    @Test func aBundleFileDeletedFromTheTreeIsMadeAgain() throws {
        let project = ProjectFixture(passCount: 1)
        writeFamily(project, count: 2)
        let settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let record = try bundleRecord(project)
        try FileManager.default.removeItem(atPath: "\(project.output)/\(record.downloadPath)")
        project.writeList(count: 1, points: { _ in 5 })
        _ = try PassBuilder(settings: settings).build()
        _ = try verifiedMembers(project, try bundleRecord(project))
    }

    @Test func moreThanTenPassesIsAnErrorAtTheBundleLineAndNothingIsWritten() throws {
        let project = ProjectFixture(passCount: 1)
        let settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let before = project.snapshot()
        writeFamily(project, count: 11)
        do {
            _ = try PassBuilder(settings: settings).build()
            Issue.record("a bundle of 11 passes was accepted")
        } catch let failure as BuildFailure {
            let error = try #require(failure.diagnostics.first { $0.rule == "content.bundle-size" })
            #expect(error.location.file.hasSuffix("content/family.yml") && error.location.line == 2)
            #expect(error.message.contains("at most 10"))
        }
        #expect(project.snapshot() == before)
    }

    @Test func twoFilesDeclaringOneBundleNameAreRefused() throws {
        let project = ProjectFixture(passCount: 1)
        writeFamily(project, count: 2, name: "trip", file: "a.yml")
        var yaml = "template: card\nbundle: trip\npasses:\n"
        yaml += "  - serialNumber: OTHER-1\n    data: { name: X, points: 1 }\n"
        project.directory.write("content/b.yml", yaml)
        #expect(throws: BuildFailure.self) { try PassBuilder(settings: try settings(project)).validate() }
        do {
            _ = try PassBuilder(settings: try settings(project)).build()
            Issue.record("a duplicate bundle name was accepted")
        } catch let failure as BuildFailure {
            let error = try #require(failure.diagnostics.first)
            #expect(error.rule == "content.bundle-duplicate")
            #expect(error.location.file.hasSuffix("content/b.yml") && error.location.line == 2)
        }
        #expect(PassBundles.load(from: project.output).isEmpty)
    }

    @Test func bundleIsAllowedOnlyBesidePasses() {
        let (definitions, problems) = ContentLoader.definitions(
            in: "content/one.yml", bytes: Array("template: card\nserialNumber: A-1\nbundle: x\n".utf8))
        #expect(definitions.isEmpty)
        #expect(problems.map(\.rule) == ["content.bundle"])
        #expect(problems.first?.location.line == 3)
    }
}
