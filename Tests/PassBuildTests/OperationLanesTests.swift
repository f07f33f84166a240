import AtomicFiles
import Foundation
import Testing
import TestSupport
@testable import PassBuild

/// How a journal's links and moves are spread over threads: every operation
/// once, threads kept out of each other's folders, and a link whose staged
/// file was already moved made from the file's new place.
@Suite struct OperationLanesTests {
    func operations(_ kind: OutputTree.Operation.Kind, _ folder: String, count: Int, source: String = "staged") -> [OutputTree.Operation] {
        (0..<count).map { .init(kind: kind, path: "\(folder)/\($0)", source: "\(source)/\($0)") }
    }

    @Test func everyOperationIsHandedOutOnceInChunks() {
        let all = operations(.link, "download", count: 700) + operations(.link, "by-token/t", count: 700) + operations(.move, "v1/passes/t", count: 700)
        let lanes = OperationLanes(all[...], chunkSize: 256)
        #expect(lanes.folders == ["download", "by-token/t", "v1/passes/t"])
        #expect(lanes.chunkCount == 9)
        var seen: [String] = []
        var finished: Int?
        while let chunk = lanes.next(finishing: finished) {
            seen += lanes.operations(of: chunk).map(\.path)
            finished = chunk
        }
        #expect(seen.sorted() == all.map(\.path).sorted())
    }

    @Test func twoThreadsWorkInDifferentFoldersWhileThereIsOtherWork() {
        let lanes = OperationLanes((operations(.link, "download", count: 600) + operations(.move, "v1/passes/t", count: 300))[...], chunkSize: 100)
        // Two threads start: the first takes the folder with the most work, the second the other one.
        let first = lanes.next(finishing: nil)!, second = lanes.next(finishing: nil)!
        #expect(lanes.operations(of: first).first?.path.hasPrefix("download/") == true)
        #expect(lanes.operations(of: second).first?.path.hasPrefix("v1/passes/t/") == true)
        // The first finishes while the second is still in v1/passes/t: it stays in download/.
        let third = lanes.next(finishing: first)!
        #expect(lanes.operations(of: third).first?.path.hasPrefix("download/") == true)
    }

    @Test func movesIntoTwoFoldersAreNotHandedOutAtOnceWhileLinksWait() {
        // Renames between folders share one kernel lock, whatever the folders.
        let lanes = OperationLanes((operations(.move, "v1/passes/a", count: 100) + operations(.move, "v1/passes/b", count: 100)
            + operations(.link, "download", count: 100))[...], chunkSize: 100)
        let first = lanes.next(finishing: nil)!, second = lanes.next(finishing: nil)!
        let kinds = [lanes.operations(of: first).first!.kind, lanes.operations(of: second).first!.kind]
        #expect(kinds.sorted { $0.rawValue < $1.rawValue } == [.link, .move])
    }

    @Test func aLinkOfAStagedFileAlreadyMovedIsMadeFromItsNewPlace() throws {
        // A changed pass: its download name still has the old bytes, and the staged file was moved
        // (by another thread, or before the process died) before the link was made.
        let folder = TemporaryDirectory()
        let tree = OutputTree(directory: folder.path)
        try tree.prepareStaging()
        let staged = try tree.stage([2], name: "a")
        try AtomicFileSystem.createDirectory("\(folder.path)/download")
        try AtomicFileSystem.writeFile([1], to: "\(folder.path)/download/a.pkpass", sync: false)
        try AtomicFileSystem.createDirectory("\(folder.path)/v1/passes/t")
        try AtomicFileSystem.rename("\(folder.path)/\(staged)", to: "\(folder.path)/v1/passes/t/a")
        let journal = OutputTree.Journal(
            operations: [.init(kind: .link, path: "download/a.pkpass", source: staged), .init(kind: .move, path: "v1/passes/t/a", source: staged)],
            stagedState: try tree.stage(try BuildState().encoded(), name: "state.json"), downloadsCSV: "x\n")
        try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
        #expect(try tree.rollForward())
        #expect(folder.read("download/a.pkpass") == [2])
        #expect(FileIdentity(path: "\(folder.path)/v1/passes/t/a")?.inode == FileIdentity(path: "\(folder.path)/download/a.pkpass")?.inode)
    }

    @Test func linksAndMovesOfManyChangedPassesOnTwoThreadsAllEndOnTheNewFiles() throws {
        let folder = TemporaryDirectory()
        let tree = OutputTree(directory: folder.path)
        try tree.prepareStaging()
        let count = 1_500
        var links: [OutputTree.Operation] = [], moves: [OutputTree.Operation] = []
        try AtomicFileSystem.createDirectory("\(folder.path)/download")
        try AtomicFileSystem.createDirectory("\(folder.path)/v1/passes/t")
        for index in 0..<count {
            let staged = try tree.stage(Array("new \(index)".utf8), name: "\(index)")
            // Every other pass was built before: its names exist with the old bytes.
            if index.isMultiple(of: 2) {
                try AtomicFileSystem.writeFile(Array("old \(index)".utf8), to: "\(folder.path)/v1/passes/t/\(index)", sync: false)
                try AtomicFileSystem.hardLink("\(folder.path)/v1/passes/t/\(index)", as: "\(folder.path)/download/\(index).pkpass")
            }
            links.append(.init(kind: .link, path: "download/\(index).pkpass", source: staged))
            links.append(.init(kind: .link, path: "by-token/t/\(index).token", source: staged))
            moves.append(.init(kind: .move, path: "v1/passes/t/\(index)", source: staged))
        }
        let journal = OutputTree.Journal(operations: links + moves, stagedState: try tree.stage(try BuildState().encoded(), name: "state.json"),
                                         downloadsCSV: "x\n")
        try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
        #expect(try tree.rollForward())
        for index in 0..<count {
            let pass = FileIdentity(path: "\(folder.path)/v1/passes/t/\(index)")
            #expect(folder.read("v1/passes/t/\(index)") == Array("new \(index)".utf8))
            #expect(FileIdentity(path: "\(folder.path)/download/\(index).pkpass")?.inode == pass?.inode)
            #expect(FileIdentity(path: "\(folder.path)/by-token/t/\(index).token")?.inode == pass?.inode)
        }
        #expect(!FileManager.default.fileExists(atPath: tree.stagingDirectory))
    }
}
