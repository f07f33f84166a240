import AtomicFiles
import Foundation
import PassContent
import PassModel
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// What makes a rebuild fast: the state read straight from its bytes and
/// written back from them, content files skipped by their stamps, and a
/// changed list file parsed only where its entries changed. Each must give
/// what the slow way gives.
@Suite struct IncrementalRebuildTests {
    static let secret = "incremental-token-secret-0123456789"

    func settings(_ project: ProjectFixture) throws -> BuildSettings { try project.buildSettings(secret: Self.secret) }

    /// A built state with the rarer parts filled in too.
    func richState() throws -> BuildState {
        let project = ProjectFixture(passCount: 4)
        _ = try PassBuilder(settings: try settings(project)).build()
        var state = try BuildState.load(from: project.output)
        state.removedPasses["pass.t/gone"] = .init(
            typeIdentifier: "pass.t", identifier: "gone", tokenHash: "h", removedTag: 7,
            files: ["download/x.pkpass"])
        var odd = state.passes.values.first!
        odd.identifier = "Q\"uote\\d é\u{1F600}\n"
        odd.imagePaths = ["content/a b.png", "content/c.png"]
        odd.publicDownloadPath = "download/x/y.pkpass"
        state.passes["pass.t/odd"] = odd
        state.contentFiles["content/x.yml"] = .init(
            hash: "abc", passes: ["pass.t/odd"], stamp: "1:2:3:4", entries: String(repeating: "0", count: 64))
        return state
    }

    @Test func theStateReadStraightFromItsBytesIsTheStateTheJSONTreeGives() throws {
        let state = try richState()
        let bytes = try state.encoded()
        let decoded = try BuildStateDecoding.decode(bytes, jobs: 2).state
        #expect(decoded == state)
        // (Foundation's Codable, an independent reader of the same bytes, is the oracle in WalletTreeTests.)
        // Whitespace, escaped slashes and keys it does not know are read too.
        let tree = try JSONSerialization.jsonObject(with: Data(bytes))
        let prettyBytes = try JSONSerialization.data(
            withJSONObject: tree, options: [.prettyPrinted, .withoutEscapingSlashes])
        var pretty = String(decoding: prettyBytes, as: UTF8.self).replacingOccurrences(of: "/", with: "\\/")
        pretty = pretty.replacingOccurrences(
            of: "\"version\"", with: "\"future\": [1, {\"a\": null}, -2.5e3, true],\n  \"version\"")
        #expect(try BuildStateDecoding.decode(Array(pretty.utf8), jobs: 1).state == state)
    }

    @Test func aDamagedStateIsRefusedNotHalfRead() throws {
        let bytes = try richState().encoded()
        for cut in [1, bytes.count / 3, bytes.count - 1] {
            #expect(throws: BuildStateDecoding.Failure.self) {
                try BuildStateDecoding.decode(Array(bytes[..<cut]), jobs: 2)
            }
        }
        #expect(throws: BuildStateDecoding.Failure.self) {
            try BuildStateDecoding.decode(Array(#"{"version":"1"}"#.utf8), jobs: 1)
        }
    }

    @Test func recordsCarriedOverAreCopiedFromTheFileAndGiveTheSameBytes() throws {
        let state = try richState()
        let folder = TemporaryDirectory()
        try AtomicFileSystem.write(try state.encoded(), to: BuildState.path(in: folder.path))
        let (loaded, file) = try BuildState.loadWithRecordRanges(from: folder.path, jobs: 2)
        #expect(loaded == state)
        var out: [UInt8] = []
        try BuildStateEncoding.write(loaded, previous: file, jobs: 2) { out += $0 }
        #expect(out == (try state.encoded()))
        // A file replaced since it was read is not copied from: every record is encoded again.
        try AtomicFileSystem.write(try BuildState().encoded(), to: BuildState.path(in: folder.path))
        out = []
        try BuildStateEncoding.write(loaded, previous: file, jobs: 2) { out += $0 }
        #expect(out == (try state.encoded()))
    }

    @Test func theJournalWrittenStraightToBytesIsItsJSON() throws {
        let journal = OutputTree.Journal(
            operations: [
                .init(kind: .link, path: "download/a \"b\".pkpass", source: ".passforge/staging/0/1"),
                .init(kind: .remove, path: "v1/x"),
            ],
            stagedState: ".passforge/staging/state.json", stagedDownloadsList: ".passforge/staging/downloads.csv")
        #expect(journal.encoded() == journal.json.serialized())
        #expect(
            OutputTree.Journal(operations: [], stagedState: "s", stagedDownloadsList: "d").encoded()
                == OutputTree.Journal(operations: [], stagedState: "s", stagedDownloadsList: "d").json.serialized())
        // A list of operations of several chunks, with escapes across the chunks' edges.
        let operations = (0..<30_000).map {
            OutputTree.Operation(kind: .move, path: "v1/passes/t/\"\($0)\"", source: ".passforge/staging/0/\($0)")
        }
        let large = OutputTree.Journal(operations: operations, stagedState: "s", stagedDownloadsList: "d")
        var chunks = 0
        var bytes: [UInt8] = []
        large.encode { chunk in
            chunks += 1
            bytes += chunk
        }
        #expect(chunks > 2)
        #expect(bytes == large.json.serialized())
        let decoded = try OutputTree.Journal(json: JSONValue(parsing: bytes))
        #expect(
            decoded.stagedDownloadsList == "d" && decoded.operations.count == 30_000
                && decoded.inlineDownloadsList == nil)
        // A journal of a build before downloads.csv was staged holds it inline: still read, to finish that build.
        let older = try OutputTree.Journal(
            json: JSONValue(parsing: Array(#"{"downloadsCSV":"a,b,c\n","operations":[],"stagedState":"s"}"#.utf8)))
        #expect(older.inlineDownloadsList == "a,b,c\n" && older.stagedDownloadsList == nil)
    }

    @Test func contentFilesAreListedAsTheContentLoaderListsThem() throws {
        let folder = TemporaryDirectory()
        for name in [
            "a.yml", "b/c.YAML", "b/d/e.json", "b/notes.txt", ".hidden.yml", ".git/x.yml", "b/.cache/y.yml", "z.yaml",
            "noext",
        ] {
            folder.write("content/\(name)", "x")
        }
        let directory = folder.file("content")
        #expect(
            try BuildPlanner.contentFiles(in: directory) == (try ContentLoader(directory: directory).contentFiles()))
        #expect(try BuildPlanner.contentFiles(in: directory).count == 4)
        // Names whose order differs between a folder's own names and whole paths ("-" and "." sort before "/").
        let tricky = TemporaryDirectory()
        for name in [
            "a.yml", "a-b.yml", "a/b.yml", "a b/c.json", "a.b/c.yml", "a/b/c.yml", "a/b-c.yml", "ab.yml", "A/é.yml",
            "A/e\u{301}x.yml", "B.yml",
        ] {
            tricky.write("content/\(name)", "x")
        }
        let listed = try BuildPlanner.contentFiles(in: tricky.file("content"))
        #expect(listed == (try ContentLoader(directory: tricky.file("content")).contentFiles()))
        #expect(listed == listed.sorted())
        #expect(listed.count == 11)
        #expect(throws: ContentErrors.self) { try BuildPlanner.contentFiles(in: folder.file("missing")) }
    }

    @Test func aChangedEntryOfAListIsTheOnlyOneRenderedAndTheOthersKeepTheirPlaces() throws {
        let project = ProjectFixture(passCount: 6)
        let settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let path = project.directory.file("content/cards.yml")
        let before = try BuildState.load(from: project.output)
        let entries = try #require(before.contentFiles[path]?.entries)
        #expect(PassListEntries.hashes(in: entries).count == 7)

        // Entry 3 changes, and a new entry goes in before entry 1.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "points: 3 }", with: "points: 300 }")
        text = text.replacingOccurrences(
            of: "  - serialNumber: C-0001\n",
            with: "  - serialNumber: N-0001\n    data: { name: \"New\" }\n  - serialNumber: C-0001\n")
        _ = project.directory.write("content/cards.yml", text)
        let report = try PassBuilder(settings: settings).build()
        #expect(Set(report.built) == ["\(TestPKI.passType)/C-0003", "\(TestPKI.passType)/N-0001"])
        #expect(report.unchanged == 5)
        let after = try BuildState.load(from: project.output)
        let order = ["C-0000", "N-0001", "C-0001", "C-0002", "C-0003", "C-0004", "C-0005"].map {
            "\(TestPKI.passType)/\($0)"
        }
        #expect(after.contentFiles[path]?.passes == order)
        for key in order where !report.built.contains(key) { #expect(after.passes[key] == before.passes[key]) }

        // The same content read whole gives the same state.
        let fresh = ProjectFixture(passCount: 0)
        var freshSettings = try self.settings(fresh)
        freshSettings.contentDirectory = project.directory.file("content")
        var planner = BuildPlanner(
            settings: freshSettings, state: BuildState(), secret: TokenSecret(Self.secret, origin: "test"),
            identities: SigningIdentities(settings: freshSettings), consumer: PlanOnly())
        let whole = try planner.makePlan(progress: { _ in })
        #expect(whole.contentFiles[path]?.passes == order)
        #expect(whole.contentFiles[path]?.entries == after.contentFiles[path]?.entries)
    }

    @Test func aListIsCutIntoEntriesOnlyWhenItsLayoutIsPlain() throws {
        let plain =
            "template: card\npasses:\n  # members\n  - serialNumber: A\n    data: { name: \"Tom * Jerry\" }\n\n  - serialNumber: B\n"
        let list = try #require(PassListEntries(Array(plain.utf8)))
        #expect(list.entries.count == 2)
        let kept = String(decoding: list.document(keeping: [1], of: Array(plain.utf8)), as: UTF8.self)
        #expect(kept == "template: card\npasses:\n\n\n\n\n  - serialNumber: B\n")
        for text in [
            "template: card\npasses:\n  - &a { serialNumber: A }\n  - *a\n",  // an anchor ties entries together
            "template: card\npasses:\n  - serialNumber: A\nbundle: x\n",  // a key after the list
            "template: card\npasses: [ { serialNumber: A } ]\n",  // flow style
            "template: card\npasses:\n\t- serialNumber: A\n",  // a tab
            "template: card\nbundle: cards\npasses:\n  - serialNumber: A\n",  // a bundle declared in the header
            "serialNumber: A\ntemplate: card\n",  // no list
        ] {
            #expect(PassListEntries(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aSettledFileIsStampedAndASameSizeEditKeepingItsTimeIsStillSeen() throws {
        let project = ProjectFixture(passCount: 2)
        let settings = try settings(project)
        let path = project.directory.file("content/cards.yml")
        let hourAgo = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        try AtomicFileSystem.setModificationTime(path, millisecondsSince1970: hourAgo)
        _ = try PassBuilder(settings: settings).build()
        let stamp = try #require(FileStamp(path: path))
        // Stamped only once its times are more than two seconds old (the change time is now: not yet).
        #expect(try BuildState.load(from: project.output).contentFiles[path]?.stamp == nil)
        #expect(!stamp.isSettled())
        #expect(stamp.isSettled(now: stamp.changed + 3_000_000_000))

        project.writeList(count: 2, points: { $0 == 1 ? 7 : $0 })  // "points: 1" → "points: 7": same size
        try AtomicFileSystem.setModificationTime(path, millisecondsSince1970: hourAgo)
        let edited = try #require(FileStamp(path: path))
        #expect(edited.size == stamp.size && edited.modified == stamp.modified)
        let report = try PassBuilder(settings: settings).build()
        #expect(report.built == ["\(TestPKI.passType)/C-0001"])
    }

    @Test func aSettledFileWhoseStampMatchesIsNotReadAgain() throws {
        let project = ProjectFixture(passCount: 2)
        var settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let path = project.directory.file("content/cards.yml")
        // A file is settled two seconds after it was last written: the build's clock is moved on, not waited for.
        let stamp = try #require(FileStamp(path: path))
        #expect(!stamp.isSettled(now: settings.clock()))
        settings.clock = { FileStamp.now() + 2_200_000_000 }
        #expect(stamp.isSettled(now: settings.clock()))
        // A state that gives the file its present stamp and a hash that is not its bytes': a build that
        // trusts the stamp does not read the file, and reuses its passes as they are.
        var state = try BuildState.load(from: project.output)
        state.contentFiles[path]?.stamp = stamp.description
        state.contentFiles[path]?.hash = "not-the-hash"
        var planner = BuildPlanner(
            settings: settings, state: state, secret: TokenSecret(Self.secret, origin: "test"),
            identities: SigningIdentities(settings: settings), consumer: PlanOnly())
        let plan = try planner.makePlan(progress: { _ in })
        #expect(plan.unchanged.count == 2)
        #expect(plan.reusedFiles.map(\.path) == [path])
        #expect(plan.contentFiles.isEmpty)
        // Without the stamp it is read, its hash differs, and it is parsed again.
        state.contentFiles[path]?.stamp = nil
        planner = BuildPlanner(
            settings: settings, state: state, secret: TokenSecret(Self.secret, origin: "test"),
            identities: SigningIdentities(settings: settings), consumer: PlanOnly())
        let reread = try planner.makePlan(progress: { _ in })
        #expect(reread.reusedFiles.isEmpty)
        #expect(reread.contentFiles[path]?.hash != "not-the-hash")
    }
}
