#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Whole-file writes that are never seen half-done (DESIGN.md, "Atomic
/// writes"): write a temporary file in the same directory, fsync it, rename
/// it over the target, then fsync the directory so the rename itself is
/// durable.
enum AtomicFile {
    struct Failure: Error {
        var path: String
        var reason: String
    }

    static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(Failure) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-" + UUID().uuidString
        // O_EXCL: never follow or reuse a file someone else put there.
        // The mode is given at creation, so a key is never readable by others,
        // not even for an instant.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            // The umask may have removed bits; set exactly what was asked.
            guard fchmod(descriptor, permissions) == 0 else {
                throw Failure(path: path, reason: String(cString: strerror(errno)))
            }
            try handle.write(contentsOf: Data(bytes))
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            unlink(temporary)
            throw Failure(path: path, reason: (error as? Failure)?.reason ?? "\(error)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: path, reason: reason)
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Runs `body` holding an exclusive `flock` on `path` (created if needed),
    /// so concurrent processes do not each create their own files.
    static func withExclusiveLock<Result, Failure: Error>(
        at path: String,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { return nil }
        defer { _ = flock(descriptor, LOCK_UN) }
        return try body()
    }
}
