import AtomicFiles
import Foundation
import PassModel
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// Issue 24, at the mechanisms that delete and count: the build's journal
/// touches build-owned paths only, the next update tag never traps, and the
/// state decoder and checks refuse what a hostile state holds.
@Suite struct TreeLayoutTests {
    @Test func aJournalThatLeavesTheTreeIsRefusedBeforeAnyOperation() throws {
        let project = TemporaryDirectory()
        project.write("victim.txt", "precious")
        project.write("output/v1/passes/pass.x/A", "a pass")
        let tree = OutputTree(directory: project.file("output"))
        try tree.prepareStaging()
        let staged = try tree.stage([1], name: "0")
        let good: [OutputTree.Operation] = [
            .init(kind: .move, path: "v1/passes/pass.x/B", source: staged),
            .init(kind: .remove, path: "v1/passes/pass.x/A"),
        ]
        let hostile: [(String, OutputTree.Operation)] = [
            ("a removal outside", .init(kind: .remove, path: "../victim.txt")),
            ("a removal of a device index", .init(kind: .remove, path: "v1/devices/d/registrations/pass.x")),
            ("a removal of the state", .init(kind: .remove, path: ".passforge/state.json")),
            ("a move outside", .init(kind: .move, path: "../victim.txt", source: staged)),
            ("a link from outside", .init(kind: .link, path: "download/AAAA.pkpass", source: "../victim.txt")),
            (
                "a link from the staging folder's parent",
                .init(kind: .link, path: "download/AAAA.pkpass", source: ".passforge/staging/../../../victim.txt")
            ),
            (
                "a folder move onto the devices",
                .init(kind: .moveFolder, path: "v1/devices", source: ".passforge/staging/tree/v1/devices")
            ),
            (
                "a folder move onto the state's folder",
                .init(kind: .moveFolder, path: ".passforge", source: ".passforge/staging/tree/x")
            ),
            (
                "a folder move of a whole kind",
                .init(kind: .moveFolder, path: "v1/passes", source: ".passforge/staging/tree/v1/passes")
            ),
            (
                "a folder move outside",
                .init(kind: .moveFolder, path: "by-token/../..", source: ".passforge/staging/tree/by-token/x")
            ),
            (
                "a folder move from outside staging",
                .init(kind: .moveFolder, path: "by-token/pass.y", source: "v1/passes/pass.x")
            ),
            (
                "a folder move of the whole staging",
                .init(kind: .moveFolder, path: "download", source: ".passforge/staging")
            ),
            (
                "a folder move of another staged folder",
                .init(kind: .moveFolder, path: "download", source: ".passforge/staging/tree/by-token/pass.x")
            ),
        ]
        for (name, operation) in hostile {
            // The hostile operation last: nothing before it may have been applied either.
            let journal = OutputTree.Journal(
                operations: good + [operation], stagedState: ".passforge/staging/state.json",
                stagedDownloadsList: ".passforge/staging/downloads.csv")
            try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
            let error = #expect(throws: BuildError.self, "\(name)") { try tree.rollForward() }
            #expect(
                error?.description.contains("refusing to \(operation.kind.rawValue)") == true,
                "\(name): \(String(describing: error))")
            #expect(error?.kind == .refused, "\(name)")
            #expect(project.read("victim.txt") == Array("precious".utf8), "\(name)")
            #expect(
                project.read("output/v1/passes/pass.x/A") == Array("a pass".utf8), "\(name): applied before the check")
            #expect(project.read("output/v1/passes/pass.x/B") == nil, "\(name): applied before the check")
        }
        #expect(throws: BuildError.self) {
            try OutputTree.check(
                OutputTree.Journal(
                    operations: [], stagedState: "../state.json",
                    stagedDownloadsList: ".passforge/staging/downloads.csv"), path: "j")
        }
        try OutputTree.check(
            OutputTree.Journal(
                operations: good + [.init(kind: .move, path: ".passforge/bundles.json", source: staged)],
                stagedState: ".passforge/staging/state.json", stagedDownloadsList: ".passforge/staging/downloads.csv"),
            path: "j")
    }

    @Test func theFoldersAFolderMoveMayTake() {
        for folder in ["v1/passes/pass.x", "v1/orders/order.x", "by-token/pass.x", "download/pass.x", "download"] {
            #expect(TreeLayout.isBuildOwnedFolder(folder), "\(folder)")
        }
        for folder in [
            "v1", "v1/passes", "v1/devices/d", "v1/passes/.x", "v1/passes/a/b", "by-token", "by-token/..", ".passforge",
            "download/", "", "v1/passes/pass.x/",
        ] {
            #expect(!TreeLayout.isBuildOwnedFolder(folder), "\(folder)")
        }
        #expect(TreeLayout.parentFolder(of: "by-token/pass.x/A.token") == "by-token/pass.x")
        #expect(TreeLayout.parentFolder(of: "download") == "")
    }

    /// A folder the output has none of moves in one rename, the files of one it has one by one; a journal
    /// killed after its folder move finishes without moving it again.
    @Test func aNewFolderMovesWholeAndAJournalFinishesIt() throws {
        let project = TemporaryDirectory()
        project.write("output/v1/passes/pass.x/A", "old A")
        let tree = OutputTree(directory: project.file("output"))
        try tree.prepareStaging()
        var records: [String: BuildState.ItemRecord] = [:]
        for serial in ["A", "B"] {
            let record = BuildState.ItemRecord(
                typeIdentifier: "pass.x", identifier: serial, teamIdentifier: "T", updateTag: 1, etag: "e", size: 1,
                fingerprint: "f",
                definitionHash: "d", templateName: "t", imagePaths: [], sourceFile: "s",
                downloadPath: TreeLayout.capabilityDownloadPath(capability: "CAP\(serial)", kind: .pass),
                publicDownloadPath: serial == "B"
                    ? TreeLayout.publicDownloadPath(kind: .pass, type: "pass.x", identifier: serial) : nil,
                tokenPath: TreeLayout.tokenPath(
                    type: "pass.x", identifier: serial, token: "token-\(serial)-0123456789abcdef"))
            records[record.key] = record
            for name in record.files { project.write("output/\(TreeLayout.stagedPath(of: name))", "new \(serial)") }
        }
        let operations = PassBuilder.moves(ofStaged: records.keys.sorted(), records: records, into: tree)
        // `download/pass.x` moves with `download`, its parent, first; its own move then finds it done.
        #expect(
            operations.filter { $0.kind == .moveFolder }.map(\.path) == [
                "by-token/pass.x", "download", "download/pass.x",
            ])
        #expect(operations.filter { $0.kind == .move }.map(\.path) == ["v1/passes/pass.x/A", "v1/passes/pass.x/B"])
        project.write("output/.passforge/staging/state.json", "{}")
        project.write("output/.passforge/staging/downloads.csv", "")
        let journal = OutputTree.Journal(
            operations: operations, stagedState: ".passforge/staging/state.json",
            stagedDownloadsList: ".passforge/staging/downloads.csv")
        try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
        // As if killed after the folder moves: the next run of the journal finds them done.
        try AtomicFileSystem.createDirectory(project.file("output/by-token"))
        try AtomicFileSystem.rename(
            project.file("output/\(TreeLayout.stagedPath(of: "by-token/pass.x"))"),
            to: project.file("output/by-token/pass.x"))
        #expect(try tree.rollForward())
        #expect(project.read("output/v1/passes/pass.x/A") == Array("new A".utf8))
        #expect(project.read("output/v1/passes/pass.x/B") == Array("new B".utf8))
        #expect(project.read("output/by-token/pass.x/B.token-B-0123456789abcdef") == Array("new B".utf8))
        #expect(project.read("output/download/CAPA.pkpass") == Array("new A".utf8))
        #expect(project.read("output/download/pass.x/B.pkpass") == Array("new B".utf8))
        #expect(!AtomicFileSystem.exists(tree.stagingDirectory))
    }

    /// A journal read back moves a staged folder only when everything in it is the build's: a link or a
    /// stray file planted there stops it before any operation.
    @Test func aStagedFolderWithALinkOrAStrayFileIsNotMoved() throws {
        for planted in ["link", "stray"] {
            let project = TemporaryDirectory()
            project.write("victim.txt", "precious")
            project.write("output/v1/passes/pass.x/A", "old A")
            let tree = OutputTree(directory: project.file("output"))
            try tree.prepareStaging()
            project.write("output/\(TreeLayout.stagedPath(of: "by-token/pass.x/A.token-A-0123456789abcdef"))", "new A")
            let plantedPath = project.file(
                "output/\(TreeLayout.stagedPath(of: "by-token/pass.x"))/\(planted == "link" ? "B.token-B-0123456789abcdef" : ".htaccess")"
            )
            if planted == "link" {
                #expect(symlink(project.file("victim.txt"), plantedPath) == 0)
            } else {
                project.write(String(plantedPath.dropFirst(project.path.count + 1)), "deny")
            }
            project.write("output/.passforge/staging/state.json", "{}")
            project.write("output/.passforge/staging/downloads.csv", "")
            let journal = OutputTree.Journal(
                operations: [
                    .init(kind: .remove, path: "v1/passes/pass.x/A"),
                    .init(
                        kind: .moveFolder, path: "by-token/pass.x", source: TreeLayout.stagedPath(of: "by-token/pass.x")
                    ),
                ],
                stagedState: ".passforge/staging/state.json", stagedDownloadsList: ".passforge/staging/downloads.csv")
            try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
            let error = #expect(throws: BuildError.self, "\(planted)") { try tree.rollForward() }
            #expect(
                error?.kind == .refused && error?.description.contains("refusing to move") == true,
                "\(planted): \(String(describing: error))")
            #expect(
                project.read("output/v1/passes/pass.x/A") == Array("old A".utf8), "\(planted): applied before the check"
            )
            #expect(!AtomicFileSystem.exists(project.file("output/by-token/pass.x")), "\(planted)")
        }
    }

    @Test func theNextUpdateTagNeverTraps() throws {
        #expect(try PassBuilder.updateTag(after: 0, now: 1_700_000_000_123) == 1_700_000_000_123)
        #expect(try PassBuilder.updateTag(after: 1_700_000_000_123, now: 1_700_000_000_500) == 1_700_000_001_000)
        #expect(try PassBuilder.updateTag(after: 1_700_000_009_000, now: 1_700_000_000_500) == 1_700_000_010_000)
        for last in [Int64.max, Int64.max - 1, Int64.max - 500, -1, Int64.min] {
            #expect(throws: BuildError.self, "\(last)") {
                try PassBuilder.updateTag(after: last, now: 1_700_000_000_000)
            }
        }
    }

    @Test func theDecoderRefusesNumbersBeyondInt64() throws {
        for number in ["9223372036854775808", "99999999999999999999", "-9223372036854775809"] {
            let bytes = Array(
                #"{"version":1,"lastUpdateTag":\#(number),"builtAt":"","passes":{},"contentFiles":{}}"#.utf8)
            #expect(throws: BuildStateDecoding.Failure.self, "\(number)") {
                try BuildStateDecoding.decode(bytes, jobs: 1)
            }
        }
        let greatest = Array(
            #"{"version":1,"lastUpdateTag":9223372036854775807,"builtAt":"","passes":{},"contentFiles":{}}"#.utf8)
        #expect(try BuildStateDecoding.decode(greatest, jobs: 1).state.lastUpdateTag == .max)
        let error = #expect(throws: BuildError.self) { try BuildState.decodePublished(greatest, bundlesJSON: nil) }
        #expect(
            error?.description.contains("lastUpdateTag is 9223372036854775807") == true, "\(String(describing: error))")
        #expect(error?.kind == .refused)
    }

    @Test func aPublishedStateMakesItsOwnDownloadsList() throws {
        var state = BuildState()
        state.lastUpdateTag = 1_700_000_000_000
        let record = BuildState.ItemRecord(
            typeIdentifier: "pass.x", identifier: "A-1", teamIdentifier: "T", updateTag: 1_700_000_000_000,
            etag: "\"e\"", size: 1,
            fingerprint: "f", definitionHash: "d", templateName: "card", imagePaths: [], sourceFile: "content/a.yml",
            downloadPath: "download/Cap_-1.pkpass", publicDownloadPath: "download/pass.x/A-1.pkpass",
            tokenPath: "by-token/pass.x/A-1.\(String(repeating: "t", count: 32))")
        state.passes[record.key] = record
        let published = try BuildState.decodePublished(try state.encoded(), bundlesJSON: Array("not json".utf8))
        #expect(published.state == state)
        #expect(published.bundlesJSON == nil)
        #expect(
            String(decoding: published.downloadsCSV, as: UTF8.self)
                == "passTypeIdentifier,serialNumber,download path\npass.x,A-1,download/Cap_-1.pkpass\n")
        // The same record under paths of another pass, or of none.
        for (name, change) in [
            (
                "tokenPath",
                { (r: inout BuildState.ItemRecord) in
                    r.tokenPath = "by-token/pass.x/B-2.\(String(repeating: "t", count: 32))"
                }
            ),
            (
                "publicDownloadPath",
                { (r: inout BuildState.ItemRecord) in r.publicDownloadPath = "download/pass.x/B-2.pkpass" }
            ),
            ("downloadPath", { (r: inout BuildState.ItemRecord) in r.downloadPath = "download/x/../../y.pkpass" }),
            ("teamIdentifier", { (r: inout BuildState.ItemRecord) in r.teamIdentifier = "T\u{1B}[2J" }),
        ] {
            var bad = state
            change(&bad.passes[record.key]!)
            let error = #expect(throws: BuildError.self, "\(name)") { try bad.check() }
            #expect(error?.description.contains(name) == true, "\(name): \(String(describing: error))")
            #expect(error?.description.contains("\u{1B}") == false, "\(name): escapes reach the terminal")
        }
    }

    @Test func quotedTextIsOneLineOfPrintableASCII() {
        #expect(BuildState.quoted("a\n=cmd|\"x\"\u{202E}") == #""a\u{A}=cmd|\"x\"\u{202E}""#)
        #expect(BuildState.quoted(String(repeating: "x", count: 500)).count == 123)
    }

    /// The paths of one pass (`isBuildOwned` itself: PublishDestinationTests).
    @Test func pathsOfOnePass() {
        let token = String(repeating: "a", count: 43)
        #expect(
            TreeLayout.isCapabilityDownload("download/abc.pkpass")
                && !TreeLayout.isCapabilityDownload("download/abc.pkpasses"))
        #expect(TreeLayout.isCapabilityDownload("download/abc.pkpasses", bundle: true))
        #expect(TreeLayout.isTokenPath("by-token/pass.x/A.\(token)", type: "pass.x", serial: "A"))
        #expect(!TreeLayout.isTokenPath("by-token/pass.x/A.\(token)/x", type: "pass.x", serial: "A"))
        #expect(!TreeLayout.isTokenPath("by-token/pass.x/AB.\(token)", type: "pass.x", serial: "A"))
        #expect(TreeLayout.isPublicDownloadPath("download/pass.x/A.pkpass", type: "pass.x", serial: "A"))
        #expect(!TreeLayout.isPublicDownloadPath("download/pass.x/A.pkpasses", type: "pass.x", serial: "A"))
        #expect(
            TreeLayout.isKey("pass.x/A", type: "pass.x", serial: "A")
                && !TreeLayout.isKey("pass.x/AB", type: "pass.x", serial: "A"))
        #expect(
            TreeLayout.isPassKey("pass.x/A-1") && !TreeLayout.isPassKey("pass.x/A\n=1")
                && !TreeLayout.isPassKey("pass.x"))
    }
}
