import AtomicFiles
import Foundation
import Testing

/// AtomicFileSystem on real files in a fresh temporary folder per test: the one place passforge's
/// sources touch the file system (`scripts/check-architecture.py` keeps FileManager out of the rest).
@Suite("AtomicFileSystem: the file-system calls every target goes through")
struct AtomicFileSystemTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "atomic-files-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    }

    private func make(_ relative: String, _ text: String = "x") throws {
        let path = "\(folder)/\(relative)"
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func link(_ relative: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/\(relative)", withDestinationPath: target)
    }

    private func permissions(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    private func cleanUp() { try? FileManager.default.removeItem(atPath: folder) }

    @Test("readFile(limit:) returns a file of the limit, and refuses one a byte larger from its size")
    func boundedRead() throws {
        defer { cleanUp() }
        try make("ten", "0123456789")
        #expect(try AtomicFileSystem.readFile("\(folder)/ten", limit: 10) == Array("0123456789".utf8))
        #expect(throws: AtomicFileSystem.BoundedReadFailure.tooLarge(size: 10)) {
            try AtomicFileSystem.readFile("\(folder)/ten", limit: 9)
        }
        try make("empty", "")
        #expect(try AtomicFileSystem.readFile("\(folder)/empty", limit: 0) == [])
    }

    @Test("readFile(limit:) tells a folder and a missing file apart")
    func boundedReadFailures() throws {
        defer { cleanUp() }
        #expect(throws: AtomicFileSystem.BoundedReadFailure.folder) {
            try AtomicFileSystem.readFile(folder, limit: 100)
        }
        #expect(throws: AtomicFileSystem.BoundedReadFailure.unreadable(code: ENOENT)) {
            try AtomicFileSystem.readFile("\(folder)/missing", limit: 100)
        }
        #expect(AtomicFileSystem.BoundedReadFailure.unreadable(code: ENOENT).reason == "No such file or directory")
    }

    @Test("readFile(limit:) reads a file with no size (a device, a pipe) only up to the limit and one byte")
    func boundedReadOfAStream() throws {
        // /dev/zero never ends: without the bound this read would not return.
        #expect(throws: AtomicFileSystem.BoundedReadFailure.tooLarge(size: 100_001)) {
            try AtomicFileSystem.readFile("/dev/zero", limit: 100_000)
        }
        #expect(try AtomicFileSystem.readFile("/dev/null", limit: 10) == [])
        // A regular file that states no size but has bytes (/proc) is read as a stream is, not refused as grown.
        let status = try AtomicFileSystem.readFile("/proc/self/status", limit: 1 << 20)
        #expect(String(decoding: status, as: UTF8.self).contains("Pid:"))
    }

    @Test("readFile(limit:) follows a link to a file")
    func boundedReadThroughALink() throws {
        defer { cleanUp() }
        try make("target", "key")
        try link("named", to: "target")
        #expect(try AtomicFileSystem.readFile("\(folder)/named", limit: 3) == Array("key".utf8))
    }

    @Test("readFile reads regular files only: nil for a folder, a device or a missing file")
    func unboundedRead() throws {
        defer { cleanUp() }
        try make("a", "bytes")
        #expect(AtomicFileSystem.readFile("\(folder)/a") == Array("bytes".utf8))
        #expect(AtomicFileSystem.readFile(folder) == nil)
        #expect(AtomicFileSystem.readFile("/dev/zero") == nil)
        #expect(AtomicFileSystem.readFile("\(folder)/missing") == nil)
    }

    @Test("filesBelow lists nested files and links relative to the folder, never a folder, and does not follow a link")
    func walk() throws {
        defer { cleanUp() }
        try make("top/a.yml")
        try make("top/sub/deeper/b.yml")
        try make("top/.hidden.yml")
        try make("top/.git/config")
        try make("top/sub/.cache/c.yml")
        try FileManager.default.createDirectory(atPath: "\(folder)/top/empty", withIntermediateDirectories: false)
        try make("elsewhere/outside.yml")
        try link("top/linked-folder", to: "\(folder)/elsewhere")
        try link("top/linked.yml", to: "\(folder)/elsewhere/outside.yml")

        let visible = try #require(AtomicFileSystem.filesBelow("\(folder)/top", skippingHidden: true))
        #expect(visible.sorted() == ["a.yml", "linked-folder", "linked.yml", "sub/deeper/b.yml"])
        let all = try #require(AtomicFileSystem.filesBelow("\(folder)/top", skippingHidden: false))
        #expect(
            all.sorted() == [
                ".git/config", ".hidden.yml", "a.yml", "linked-folder", "linked.yml", "sub/.cache/c.yml",
                "sub/deeper/b.yml",
            ])
        #expect(AtomicFileSystem.filesBelow("\(folder)/missing", skippingHidden: true) == nil)
        #expect(AtomicFileSystem.filesBelow("\(folder)/top/a.yml", skippingHidden: true) == nil)
    }

    @Test("isReadable is false for a file with mode 000, except for root, whom access(2) lets read anything")
    func readability() throws {
        defer { cleanUp() }
        try make("secret")
        let path = "\(folder)/secret"
        #expect(AtomicFileSystem.isReadable(path))
        #expect(chmod(path, 0) == 0)
        #expect(AtomicFileSystem.isReadable(path) == (geteuid() == 0))
        #expect(!AtomicFileSystem.isReadable("\(folder)/missing"))
    }

    @Test("entryKind tells files, folders, links and devices apart; followingLinks looks through a link")
    func entryKinds() throws {
        defer { cleanUp() }
        try make("file")
        try link("to-folder", to: folder)
        try link("dangling", to: "\(folder)/missing")
        #expect(AtomicFileSystem.entryKind("\(folder)/file") == .regularFile)
        #expect(AtomicFileSystem.entryKind(folder) == .directory)
        #expect(AtomicFileSystem.entryKind("\(folder)/to-folder") == .symbolicLink)
        #expect(AtomicFileSystem.entryKind("\(folder)/to-folder", followingLinks: true) == .directory)
        #expect(AtomicFileSystem.entryKind("\(folder)/dangling") == .symbolicLink)
        #expect(AtomicFileSystem.entryKind("\(folder)/dangling", followingLinks: true) == nil)
        #expect(AtomicFileSystem.entryKind("/dev/null") == .other)
        #expect(AtomicFileSystem.entryKind("\(folder)/missing") == nil)
        #expect(AtomicFileSystem.isDirectory("\(folder)/to-folder"))
        #expect(!AtomicFileSystem.isDirectory("\(folder)/file"))
    }

    @Test(
        "createDirectory makes the missing folders with the permissions asked for, and leaves an existing one as it is")
    func createDirectory() throws {
        defer { cleanUp() }
        try AtomicFileSystem.createDirectory("\(folder)/a/b/c", permissions: 0o700)
        for path in ["\(folder)/a", "\(folder)/a/b", "\(folder)/a/b/c"] {
            #expect(AtomicFileSystem.isDirectory(path))
            #expect(try permissions(path) == 0o700, "\(path)")
        }
        #expect(chmod("\(folder)/a", 0o755) == 0)
        try AtomicFileSystem.createDirectory("\(folder)/a", permissions: 0o700)
        #expect(try permissions("\(folder)/a") == 0o755)
        try AtomicFileSystem.createDirectory("\(folder)/plain/")
        #expect(AtomicFileSystem.isDirectory("\(folder)/plain"))
    }

    @Test("createDirectory refuses a file in the way, naming it")
    func createDirectoryOverAFile() throws {
        defer { cleanUp() }
        try make("file")
        let failure = #expect(throws: AtomicFileSystem.Failure.self) {
            try AtomicFileSystem.createDirectory("\(folder)/file")
        }
        #expect(failure?.code == ENOTDIR)
        #expect(failure?.description == "cannot create folder \(folder)/file: Not a directory")
        #expect(throws: AtomicFileSystem.Failure.self) { try AtomicFileSystem.createDirectory("\(folder)/file/below") }
    }

    @Test("currentDirectory is the process's working directory")
    func currentDirectory() {
        #expect(AtomicFileSystem.currentDirectory == FileManager.default.currentDirectoryPath)
    }

    @Test(
        "write replaces a file whole with the permissions asked for; writeFile with exclusive refuses an existing file")
    func writes() throws {
        defer { cleanUp() }
        let path = "\(folder)/new/key.pem"
        try AtomicFileSystem.write(Array("one".utf8), to: path, permissions: 0o600)
        try AtomicFileSystem.write(Array("two".utf8), to: path, permissions: 0o600)
        #expect(AtomicFileSystem.readFile(path) == Array("two".utf8))
        #expect(try permissions(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(folder)/new") == ["key.pem"])
        let failure = #expect(throws: AtomicFileSystem.Failure.self) {
            try AtomicFileSystem.writeFile(Array("three".utf8), to: path, sync: false, exclusive: true)
        }
        #expect(failure?.code == EEXIST)
        #expect(AtomicFileSystem.readFile(path) == Array("two".utf8))
    }
}
