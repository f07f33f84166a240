#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive, non-blocking `flock` on a file next to the SQLite database:
/// the push lock of processes sharing that file on one machine. The kernel
/// releases it when the process dies, so a killed run never leaves it held.
final class FileLock: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw FileLockError(description: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            if failure == EWOULDBLOCK { throw PushLockBusy() }
            throw FileLockError(description: "cannot lock \(path): \(String(cString: strerror(failure)))")
        }
        self.descriptor = descriptor
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

struct FileLockError: Error, CustomStringConvertible, Sendable {
    var description: String
}
