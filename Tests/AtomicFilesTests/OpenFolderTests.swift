import AtomicFiles
import Foundation
import TestSupport
import Testing

/// Files made, moved and linked relative to an open folder, on real files.
@Suite struct OpenFolderTests {
    @Test func aFileIsCreatedMovedAndLinkedByName() throws {
        let root = NSTemporaryDirectory() + "open-folder-tests-\(UUID().uuidString)"
        defer { AtomicFileSystem.removeTree(root) }
        try AtomicFileSystem.createDirectory("\(root)/own")
        try AtomicFileSystem.createDirectory("\(root)/tree/by-token")
        let own = try OpenFolder("\(root)/own")
        let tree = try OpenFolder("\(root)/tree")
        let tokens = try OpenFolder("\(root)/tree/by-token")

        try own.createFile(Array("pass".utf8), named: "0", modifiedAt: 1_700_000_000_123)
        // A name already there is never overwritten by a create.
        let exists = #expect(throws: AtomicFileSystem.Failure.self) {
            try own.createFile([1], named: "0", modifiedAt: 0)
        }
        #expect(exists?.description.contains("\(root)/own/0") == true, "\(String(describing: exists))")

        try own.moveFile(named: "0", to: tree, as: "A")
        try tree.linkFile(named: "A", to: tokens, as: "A.token")
        #expect(!AtomicFileSystem.exists("\(root)/own/0"))
        #expect(AtomicFileSystem.readFile("\(root)/tree/A") == Array("pass".utf8))
        #expect(AtomicFileSystem.readFile("\(root)/tree/by-token/A.token") == Array("pass".utf8))
        // One file, two names, dated as asked.
        var first = stat()
        var second = stat()
        #expect(stat("\(root)/tree/A", &first) == 0 && stat("\(root)/tree/by-token/A.token", &second) == 0)
        #expect(first.st_ino == second.st_ino && first.st_nlink == 2)
        #expect(first.st_mtim.tv_sec == 1_700_000_000 && first.st_mtim.tv_nsec == 123_000_000)

        // A link onto a name that is there, or a move of a name that is not, fails naming both paths.
        let taken = #expect(throws: AtomicFileSystem.Failure.self) {
            try tree.linkFile(named: "A", to: tokens, as: "A.token")
        }
        #expect(taken?.description.contains("\(root)/tree/by-token/A.token") == true)
        let missing = #expect(throws: AtomicFileSystem.Failure.self) {
            try own.moveFile(named: "gone", to: tree, as: "B")
        }
        #expect(missing?.description.contains("\(root)/own/gone") == true)
        #expect(throws: AtomicFileSystem.Failure.self) { try OpenFolder("\(root)/no-such-folder") }
    }
}

extension OpenFolderTests {
    /// tmpfs is told from a disk file system as the kernel's mount table tells them.
    @Test func aFolderKnowsWhetherItIsOnTmpfs() throws {
        for base in [NSTemporaryDirectory(), "/dev/shm", "/"] where AtomicFileSystem.isDirectory(base) {
            let type = try #require(fileSystemType(of: base))
            #expect(try OpenFolder(base).isInMemory == (type == "tmpfs"), "\(base): \(type)")
        }
    }
}
