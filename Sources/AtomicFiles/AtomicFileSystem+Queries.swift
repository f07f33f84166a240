#if canImport(Glibc)
    import Glibc
#endif

/// The reading side of the file system that the rest of passforge uses instead of FileManager:
/// bounded reads of files named from outside (keys, tokens, certificates), what is at a path,
/// the working directory, and the files below a folder.
extension AtomicFileSystem {
    /// Why `readFile(_:limit:)` returned nothing.
    package enum BoundedReadFailure: Error, Sendable, Equatable {
        /// Missing, not permitted, or a read failed: the errno.
        case unreadable(code: Int32)
        /// A folder (links followed), not a file.
        case folder
        /// More than the limit: a regular file's size, read without reading the file; for a pipe,
        /// the bytes read before it stopped (the limit and one).
        case tooLarge(size: Int)
        /// A regular file that grew past its size while it was read.
        case grew

        /// "no such file", "a folder", ...: for a caller's message.
        package var reason: String {
            switch self {
            case .unreadable(let code): String(cString: strerror(code))
            case .folder: "it is a folder"
            case .tooLarge(let size): "it is too large (\(size) bytes or more)"
            case .grew: "it grew while it was read"
            }
        }
    }

    /// The bytes of the file at `path` (links followed), never more than `limit` of them read: a
    /// regular file larger than `limit` is refused from its size alone, and a pipe or device (a
    /// `<(…)` of the shell, /dev/stdin) is read up to `limit` bytes and one, then refused.
    package static func readFile(_ path: String, limit: Int) throws(BoundedReadFailure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw errno == EISDIR ? .folder : .unreadable(code: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(code: errno) }
        let kind = info.st_mode & S_IFMT
        guard kind != S_IFDIR else { throw .folder }
        // A regular file that states no size (/proc, sysfs) is read as a pipe is.
        let isRegular = kind == S_IFREG && info.st_size > 0
        let stated = Int(info.st_size)
        if isRegular, stated > limit { throw .tooLarge(size: stated) }
        // A regular file: its size and one byte more, to notice one that grows while it is read.
        // Anything else states no size: read in pieces, up to one byte past the limit.
        let most = isRegular ? stated + 1 : limit + 1
        var bytes = [UInt8](repeating: 0, count: isRegular ? most : min(most, 64 * 1024))
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count < most else { break }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, most - bytes.count)))
            }
            let count = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(code: errno)
            }
            if count == 0 { break }
            filled += count
        }
        if isRegular, filled > stated { throw .grew }
        if filled > limit { throw .tooLarge(size: filled) }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Whether this process may read the file at `path` (access(2) with R_OK, links followed).
    package static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    /// Whether `path` is a folder, or a link to one.
    package static func isDirectory(_ path: String) -> Bool {
        entryKind(path, followingLinks: true) == .directory
    }

    /// The process's working directory (getcwd); "." when it cannot be known (it was removed).
    package static var currentDirectory: String {
        guard let path = getcwd(nil, 0) else { return "." }
        defer { free(path) }
        return String(cString: path)
    }

    /// Everything below the folder at `path` that is not a folder, as paths relative to it
    /// (`a.yml`, `sub/b.yml`), in no particular order: files, and symbolic links, which are not
    /// followed (a link to a folder is listed, the files it leads to are not). With
    /// `skippingHidden`, names that start with "." are left out, and so is all of a hidden folder.
    /// A folder below that cannot be listed is passed over; nil when `path` itself cannot be.
    package static func filesBelow(_ path: String, skippingHidden: Bool) -> [String]? {
        guard let top = directoryEntries(path) else { return nil }
        var files: [String] = []
        var pending: [(prefix: String, entries: [(name: String, isDirectory: Bool)])] = [("", top)]
        while let (prefix, entries) = pending.popLast() {
            for entry in entries where !(skippingHidden && entry.name.hasPrefix(".")) {
                let relative = prefix + entry.name
                if !entry.isDirectory {
                    files.append(relative)
                } else if let below = directoryEntries("\(path)/\(relative)") {
                    pending.append((relative + "/", below))
                }
            }
        }
        return files
    }
}
