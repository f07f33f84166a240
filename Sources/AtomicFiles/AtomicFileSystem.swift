import CSystemCalls
import ConcurrencySupport
package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// File operations that never leave a half-written file behind: each file is
/// written to a temporary file in the same folder (so the same file system),
/// flushed with fsync, then renamed over the old one, and the folder is
/// flushed so the rename survives a crash. A reader sees the old file or the
/// new one, never part of either.
package enum AtomicFileSystem {
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var path: String
        package var operation: String
        package var code: Int32
        package var description: String {
            "cannot \(operation) \(path): \(String(cString: strerror(code)))"
                + (code == ENOSPC ? "; free some disk space" : code == EACCES ? "; check the folder's permissions" : "")
        }
    }

    /// Writes `bytes` to `path` via a temporary file, fsyncs it, renames it
    /// into place and fsyncs the folder, so the file is either old or new.
    package static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        try createDirectory(directory.isEmpty ? "." : directory)
        let temporary = temporaryPath(for: path)
        try writeFile(bytes, to: temporary, permissions: permissions, sync: true, exclusive: true)
        try rename(temporary, to: path)
        try syncDirectory(directory.isEmpty ? "." : directory)
    }

    /// `write(_:to:)` for a file made in pieces: `body` appends them to a writer, so the file is
    /// never whole in memory. On failure the temporary file is removed and `path` is as it was.
    package static func write(to path: String, _ body: (inout BufferedFileWriter) throws(Failure) -> Void)
        throws(Failure)
    {
        let directory = (path as NSString).deletingLastPathComponent
        try createDirectory(directory.isEmpty ? "." : directory)
        let temporary = temporaryPath(for: path)
        var writer = try BufferedFileWriter(creating: temporary)
        do throws(Failure) {
            try body(&writer)
            try writer.sync()
        } catch {
            unlink(temporary)
            throw error
        }
        try rename(temporary, to: path)
        try syncDirectory(directory.isEmpty ? "." : directory)
    }

    /// `output/.x` → `output/.x.tmp-<pid>-<n>`: in the same folder, so rename is atomic.
    package static func temporaryPath(for path: String) -> String {
        let counter = temporaryCounter.increment()
        return "\(path).tmp-\(getpid())-\(counter)"
    }

    /// Writes a whole file (no rename); `sync` fsyncs it before closing.
    /// `exclusive` refuses to reuse a file someone else put there (O_EXCL).
    package static func writeFile(
        _ bytes: [UInt8], to path: String, permissions: mode_t = 0o644, sync: Bool, exclusive: Bool = false
    ) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), permissions)
        guard fd >= 0 else { throw Failure(path: path, operation: "create", code: errno) }
        defer { close(fd) }
        // The umask may have removed bits; a key file gets exactly 0600 from its first byte.
        guard fchmod(fd, permissions) == 0 else { throw Failure(path: path, operation: "chmod", code: errno) }
        try writeAll(bytes, to: fd, path: path)
        if sync, fsync(fd) != 0 {
            let code = errno
            unlink(path)
            throw Failure(path: path, operation: "fsync", code: code)
        }
    }

    /// Creates the file at `path`, which must not exist yet, with `bytes`
    /// and the given modification time, in as few system calls as a file
    /// can be made: open, write, futimens, close (a fchmod only when the
    /// umask would take bits away from 0644). Not flushed: for staged files
    /// that one `syncFileSystem` makes durable together.
    package static func createFile(_ bytes: [UInt8], at path: String, modifiedAt milliseconds: Int64) throws(Failure) {
        try createFile(bytes, at: path, in: AT_FDCWD, shownAs: path, modifiedAt: milliseconds)
    }

    /// `createFile`, with `path` relative to the open folder `folder` (`OpenFolder`).
    static func createFile(
        _ bytes: [UInt8], at path: String, in folder: Int32, shownAs shown: String,
        modifiedAt milliseconds: Int64
    ) throws(Failure) {
        let fd = openat(folder, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(path: shown, operation: "create", code: errno) }
        defer { close(fd) }
        if !umaskKeeps644, fchmod(fd, 0o644) != 0 { throw Failure(path: shown, operation: "chmod", code: errno) }
        try writeAll(bytes, to: fd, path: path, in: folder, shownAs: shown)
        var times = [timespec(milliseconds), timespec(milliseconds)]
        guard futimens(fd, &times) == 0 else {
            throw Failure(path: shown, operation: "set the modification time of", code: errno)
        }
    }

    /// Writes every byte to `fd` (a write may take fewer); on failure the
    /// half-written file at `path` (relative to `folder`) is removed.
    private static func writeAll(
        _ bytes: [UInt8], to fd: Int32, path: String, in folder: Int32 = AT_FDCWD,
        shownAs shown: String? = nil
    ) throws(Failure) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                unlinkat(folder, path, 0)
                throw Failure(path: shown ?? path, operation: "write", code: code)
            }
            written += result
        }
    }

    /// Whether files created with mode 0644 get exactly 0644: the process's
    /// umask, read from /proc (reading it with umask(2) would change it for
    /// a moment, under other threads creating files).
    private static let umaskKeeps644: Bool = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = Int(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return false }
        return mask & 0o644 == 0
    }()

    package static func rename(_ from: String, to: String) throws(Failure) {
        guard Glibc.rename(from, to) == 0 else { throw Failure(path: to, operation: "rename \(from) to", code: errno) }
    }

    /// Renames `from` to `to`; returns false when `from` is gone (moved by
    /// an earlier run of the same work) and `to` is there.
    @discardableResult
    package static func renameIfPresent(_ from: String, to: String) throws(Failure) -> Bool {
        if Glibc.rename(from, to) == 0 { return true }
        let code = errno
        if code == ENOENT, access(from, F_OK) != 0, access(to, F_OK) == 0 { return false }
        throw Failure(path: to, operation: "rename \(from) to", code: code)
    }

    /// Makes `link` another name of `target`'s bytes (a hard link), atomically
    /// replacing `link`; its folder is made first unless `creatingFolder` is false.
    package static func hardLink(_ target: String, as link: String, creatingFolder: Bool = true) throws(Failure) {
        if creatingFolder { try createDirectory((link as NSString).deletingLastPathComponent) }
        // link(2) is atomic on its own when the name is new; only a replacement needs the rename.
        if Glibc.link(target, link) == 0 { return }
        guard errno == EEXIST else { throw Failure(path: link, operation: "link", code: errno) }
        let temporary = temporaryPath(for: link)
        guard Glibc.link(target, temporary) == 0 else { throw Failure(path: link, operation: "link", code: errno) }
        try rename(temporary, to: link)
    }

    /// `hardLink(target, as: link)`; returns false, doing nothing, when
    /// `target` is gone and `link` is there (made by an earlier run of the same work).
    @discardableResult
    package static func hardLinkIfPresent(_ target: String, as link: String) throws(Failure) -> Bool {
        if Glibc.link(target, link) == 0 { return true }
        if errno == ENOENT, access(target, F_OK) != 0, access(link, F_OK) == 0 { return false }
        try hardLink(target, as: link, creatingFolder: false)
        return true
    }

    /// Sets the modification time of the file at `path` (and so of every hard
    /// link to it), in milliseconds since 1970.
    package static func setModificationTime(_ path: String, millisecondsSince1970 milliseconds: Int64) throws(Failure) {
        var times = [timespec(milliseconds), timespec(milliseconds)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
            throw Failure(path: path, operation: "set the modification time of", code: errno)
        }
    }

    /// Removes the file at `path`; a file already gone is no error.
    package static func remove(_ path: String) throws(Failure) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Failure(path: path, operation: "remove", code: errno) }
    }

    /// Removes `path` and everything below it, if it is there (a staging folder); links are removed, not followed.
    package static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Whether anything is at `path` (links followed).
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Removes the folder at `path` if it is empty; returns whether it did.
    /// A folder that still holds files (or is gone) is left as it is.
    @discardableResult
    package static func removeEmptyDirectory(_ path: String) -> Bool {
        rmdir(path) == 0
    }

    /// Creates the folder at `path` and every missing folder above it (`mkdir -p`); a folder already
    /// there, or a link to one, is no error. The folders it makes get exactly `permissions` when given
    /// (a key's folder: 0700), else 0777 less the umask.
    package static func createDirectory(_ path: String, permissions: mode_t? = nil) throws(Failure) {
        guard !path.isEmpty, !isDirectory(path) else { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try createDirectory(parent, permissions: permissions) }
        guard mkdir(path, permissions ?? 0o777) == 0 else {
            let code = errno
            // Another process may have made it meanwhile: a folder there now is what was asked for.
            if code == EEXIST, isDirectory(path) { return }
            throw Failure(path: path, operation: "create folder", code: code == EEXIST ? ENOTDIR : code)
        }
        // mkdir's mode loses the bits the umask takes away.
        if let permissions, chmod(path, permissions) != 0 {
            throw Failure(path: path, operation: "set the permissions of", code: errno)
        }
    }

    /// Flushes the file at `path` to disk.
    package static func syncFile(_ path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(path: path, operation: "fsync", code: errno) }
    }

    /// fsync of a folder makes the renames inside it durable.
    package static func syncDirectory(_ path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, operation: "open folder", code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(path: path, operation: "fsync folder", code: errno) }
    }

    /// Flushes every written file of the file system holding `path` in one call.
    /// Ten thousand passes written and then one syncfs is as durable as ten
    /// thousand fsyncs, and much faster.
    package static func syncFileSystem(containing path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, operation: "open folder", code: errno) }
        defer { close(fd) }
        guard passforge_syncfs(fd) == 0 else { throw Failure(path: path, operation: "sync", code: errno) }
    }

    /// The bytes of the regular file at `path` (open, fstat, read, close); nil when it cannot be read.
    package static func readFile(_ path: String) -> [UInt8]? {
        guard let file = RegularFile(openingForReading: path) else { return nil }
        return file.readAll()
    }

    /// What is at `path` itself, a symbolic link not followed (lstat); nil when nothing is.
    package enum EntryKind: Sendable, Equatable {
        case regularFile, directory, symbolicLink, other
    }

    /// What is at `path`: with `followingLinks` (stat), what a link there leads to, and nil for a
    /// link that leads nowhere.
    package static func entryKind(_ path: String, followingLinks: Bool = false) -> EntryKind? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// The names in the folder at `path` (not `.` and `..`), with whether each
    /// is a folder (a link to a folder is not); nil when it cannot be listed.
    /// One getdents per few hundred names instead of a stat per name.
    package static func directoryEntries(_ path: String) -> [(name: String, isDirectory: Bool)]? {
        guard let folder = opendir(path) else { return nil }
        defer { closedir(folder) }
        var entries: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                isDirectory = lstat("\(path)/\(name)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            }
            entries.append((name, isDirectory))
        }
        return entries
    }

    private static let temporaryCounter = Counter()
}

extension timespec {
    /// `milliseconds` since 1970 (negative ones too, rounded towards the past).
    fileprivate init(_ milliseconds: Int64) {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        self.init(tv_sec: Int(seconds), tv_nsec: Int((milliseconds - seconds * 1000) * 1_000_000))
    }
}
