#if canImport(Glibc)
    import Glibc
#endif

/// Creates a file and writes it through a buffer of about a megabyte, so
/// that a large file is never whole in memory. The file must not exist yet;
/// it is not flushed (staged files are made durable together, see
/// `AtomicFileSystem.syncFileSystem`). On failure the partial file is removed.
package struct BufferedFileWriter: ~Copyable {
    private let path: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity = 1 << 20

    package init(creating path: String) throws(AtomicFileSystem.Failure) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw AtomicFileSystem.Failure(path: path, operation: "create", code: errno) }
        self.path = path
        buffer.reserveCapacity(capacity)
    }

    deinit { close(descriptor) }

    package mutating func append(_ bytes: some Collection<UInt8>) throws(AtomicFileSystem.Failure) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { try flush() }
    }

    package mutating func append(_ byte: UInt8) throws(AtomicFileSystem.Failure) {
        buffer.append(byte)
        if buffer.count >= capacity { try flush() }
    }

    /// Writes what is buffered; call it once more after the last append.
    package mutating func flush() throws(AtomicFileSystem.Failure) {
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                unlink(path)
                throw AtomicFileSystem.Failure(path: path, operation: "write", code: code)
            }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and flushes the file to disk (fsync).
    package mutating func sync() throws(AtomicFileSystem.Failure) {
        try flush()
        guard fsync(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw AtomicFileSystem.Failure(path: path, operation: "fsync", code: code)
        }
    }
}
