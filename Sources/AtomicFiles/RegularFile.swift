#if canImport(Glibc)
    import Glibc
#endif

/// A regular file opened for reading, with the stamp of the version that
/// is open: what is read is that version's bytes, even if a rename replaces
/// the file meanwhile. Closed when it goes out of scope.
package struct RegularFile: ~Copyable {
    package let stamp: FileStamp
    let descriptor: Int32

    /// Opens the file at `path`; nil when it is missing, unreadable or not a
    /// regular file (a folder, a device). With `followingLinks` false, a
    /// symbolic link at `path` (its last component) is not opened either: nil.
    package init?(openingForReading path: String, followingLinks: Bool = true) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return nil }
        guard let stamp = FileStamp(descriptor: descriptor), stamp.isRegularFile else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.stamp = stamp
    }

    deinit { close(descriptor) }

    /// All `stamp.size` bytes of the file; nil when a read fails or the
    /// file ends early.
    package func readAll() -> [UInt8]? {
        // Read straight into the array's storage: zero-filling first costs a build state of 90 MB a tenth of a second.
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(stamp.size)) { buffer, initialized in
            complete = readAll(into: UnsafeMutableRawBufferPointer(buffer))
            // Bytes past a short read are never looked at: the array is dropped.
            initialized = complete ? buffer.count : 0
        }
        return complete ? bytes : nil
    }

    /// Reads the file from the start into `destination`, `stamp.size` bytes long (a server's own
    /// buffer type, filled without a copy); false when a read fails or the file ends early.
    package func readAll(into destination: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < destination.count {
            let count = Glibc.read(descriptor, destination.baseAddress! + done, destination.count - done)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            done += count
        }
        return done == destination.count
    }
}

extension RegularFile {
    /// `count` bytes from `offset` (fewer at the end of the file); nil when a read fails.
    package func read(at offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done))
            }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { return nil }
            if result == 0 { break }
            done += result
        }
        return done == count ? bytes : Array(bytes[..<done])
    }
}
