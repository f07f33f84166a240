import AtomicFiles
import Foundation
import PassContent
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

@Suite struct TokenSecretTests {
    @Test func tokensAndCapabilitiesAreStableAndDistinct() {
        let secret = TokenSecret("0123456789abcdef-secret", origin: "test")
        let token = secret.authenticationToken(passTypeIdentifier: "pass.a", serialNumber: "S1")
        #expect(token == secret.authenticationToken(passTypeIdentifier: "pass.a", serialNumber: "S1"))
        #expect(token != secret.authenticationToken(passTypeIdentifier: "pass.a", serialNumber: "S2"))
        #expect(token.count == 43 && !token.contains("=") && !token.contains("+") && !token.contains("/"))
        let capability = secret.downloadCapability(passTypeIdentifier: "pass.a", serialNumber: "S1")
        #expect(capability.count == 22 && !token.hasPrefix(capability))
        #expect(
            TokenSecret("another-secret-0123", origin: "t").authenticationToken(
                passTypeIdentifier: "pass.a", serialNumber: "S1") != token)
    }

    @Test func fallbackSecretIsCreatedOnceAndRefusedUnderCI() throws {
        let folder = TemporaryDirectory()
        let first = try TokenSecret.resolve(environment: [:], projectStateDirectory: folder.path)
        let second = try TokenSecret.resolve(environment: [:], projectStateDirectory: folder.path)
        #expect(first.fingerprint == second.fingerprint)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.file("token-secret"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(throws: BuildError.self) {
            _ = try TokenSecret.resolve(environment: ["CI": "true"], projectStateDirectory: TemporaryDirectory().path)
        }
        #expect(throws: BuildError.self) {
            _ = try TokenSecret.resolve(
                environment: ["PASSFORGE_TOKEN_SECRET": "short"], projectStateDirectory: folder.path)
        }
    }
}

@Suite struct OutputTreeTests {
    func record(_ serial: String) -> BuildState.ItemRecord {
        .init(
            typeIdentifier: "pass.t", identifier: serial, teamIdentifier: "T", updateTag: 5, etag: "\"e\"", size: 1,
            tokenHash: nil, fingerprint: "f", definitionHash: "d", templateName: "t", imagePaths: [],
            sourceFile: "c.yml",
            downloadPath: "download/\(serial).pkpass", publicDownloadPath: nil)
    }

    @Test func journalIsRolledForwardAfterAnInterruption() throws {
        let folder = TemporaryDirectory()
        let tree = OutputTree(directory: folder.path)
        try tree.prepareStaging()
        let staged = try tree.stage([1, 2, 3], name: "0.pkpass")
        var state = BuildState()
        state.passes["pass.t/A"] = record("A")
        let stagedState = try tree.stage(try state.encoded(), name: "state.json")
        let journal = OutputTree.Journal(
            operations: [
                .init(kind: .move, path: "v1/passes/pass.t/A", source: staged),
                .init(kind: .link, path: "download/A.pkpass", source: "v1/passes/pass.t/A"),
            ],
            stagedState: stagedState, stagedDownloadsList: try tree.stage(Array("x\n".utf8), name: "downloads.csv"))
        // Written but never applied, as if the process died right after the journal.
        try AtomicFileSystem.write(Array(try JSONEncoder().encode(journal)), to: tree.journalPath)
        #expect(try tree.rollForward())
        #expect(folder.read("v1/passes/pass.t/A") == [1, 2, 3])
        #expect(folder.read("download/A.pkpass") == [1, 2, 3])
        #expect(try BuildState.load(from: folder.path) == state)
        #expect(folder.read(".passforge/downloads.csv") == Array("x\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: tree.journalPath))
        #expect(try !tree.rollForward())
    }

    @Test func aDamagedJournalWasNeverCommittedAndIsDiscarded() throws {
        let folder = TemporaryDirectory()
        let tree = OutputTree(directory: folder.path)
        folder.write(".passforge/journal.json", "{\"oper")
        #expect(try !tree.rollForward())
        #expect(!FileManager.default.fileExists(atPath: tree.journalPath))
    }

    @Test func aDamagedStateIsAClearError() {
        let folder = TemporaryDirectory()
        folder.write(".passforge/state.json", "not json")
        #expect {
            _ = try BuildState.load(from: folder.path)
        } throws: { "\($0)".contains("is damaged") }
    }
}

@Suite struct DiagnosticCollectorTests {
    @Test func repeatedProblemsAreReportedOnceWithACount() {
        var collector = DiagnosticCollector()
        let location = SourceLocation(file: "templates/t/logo.png")
        for _ in 0..<3 { collector.add(.warning(at: location, rule: "image.size", "too big")) }
        collector.add(.error(at: SourceLocation(file: "a.yml", line: 1), rule: "x", "bad"))
        #expect(collector.report.count == 2)
        #expect(collector.report.last?.message == "too big (in 3 passes)")
        #expect(collector.hasErrors)
    }
}

@Suite struct BuilderTests {
    @Test func updateTagsIncreaseStrictlyEvenWhenTheClockDoesNot() throws {
        let project = ProjectFixture(passCount: 1)
        var settings = BuildSettings(
            contentDirectory: project.directory.file("content"),
            templatesDirectory: project.directory.file("templates"),
            outputDirectory: project.output,
            configuration: try ProjectConfiguration.load(file: project.directory.file("passforge.yml")),
            projectStateDirectory: project.directory.file(".passforge"),
            environment: TestPKI.shared.environment(TestPKI.shared.leaf()))
        settings.jobs = 1
        let first = try PassBuilder(settings: settings).build()
        // Pretend an earlier build happened far in the future: the next tag must still be greater.
        var state = try BuildState.load(from: project.output)
        state.lastUpdateTag = 9_999_999_999_999
        try AtomicFileSystem.write(try state.encoded(), to: BuildState.path(in: project.output))
        project.writeList(count: 1, points: { _ in 77 })
        let second = try PassBuilder(settings: settings).build()
        #expect(first.built.count == 1 && second.built.count == 1)
        #expect(second.updateTag == 10_000_000_000_000)
    }
}
