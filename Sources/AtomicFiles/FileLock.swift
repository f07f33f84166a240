#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a file, held until `release()`; the kernel drops
/// it when the process dies, so a killed process never leaves it held. The
/// one lock of every cross-process guard: one build per tree, one push run
/// per store, one index writer per device shard.
package final class FileLock: Sendable {
    private let descriptor: Int32
    private let afterRelease: (@Sendable () -> Void)?

    private init(descriptor: Int32, afterRelease: (@Sendable () -> Void)? = nil) {
        self.descriptor = descriptor
        self.afterRelease = afterRelease
    }

    /// This lock, with `action` run once it is released (a holder's in-process gate opened).
    package func onRelease(_ action: @escaping @Sendable () -> Void) -> FileLock {
        FileLock(descriptor: descriptor, afterRelease: action)
    }

    /// Takes the lock on `path`, creating the file (and its folder) when
    /// missing. Nil when another open file holds it and `blocking` is false.
    /// A symbolic link at `path` is refused (O_NOFOLLOW): a lock file never is one, and
    /// creating through it would make a file wherever it points.
    package static func acquire(_ path: String, blocking: Bool) throws(AtomicFileSystem.Failure) -> FileLock? {
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if descriptor < 0, errno == ENOENT {
            let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            try AtomicFileSystem.createDirectory(folder)
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        }
        guard descriptor >= 0 else {
            throw AtomicFileSystem.Failure(path: path, operation: "open the lock file", code: errno)
        }
        while flock(descriptor, blocking ? LOCK_EX : LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            close(descriptor)
            if failure == EWOULDBLOCK { return nil }
            throw AtomicFileSystem.Failure(path: path, operation: "lock", code: failure)
        }
        return FileLock(descriptor: descriptor)
    }

    package func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
        afterRelease?()
    }
}
