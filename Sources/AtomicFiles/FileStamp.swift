#if canImport(Glibc)
    import Glibc
#endif

/// What tells one version of a file from another: its device and inode, size,
/// and modification and status-change times. passforge replaces files by
/// rename, never rewrites them, so a new version has a new inode (and usually
/// a new size or time).
///
/// A build remembers the stamp of each content file it hashed, to skip
/// reading it again. Equal stamps mean the same bytes, except when the file
/// changed within the clock's granularity of the moment it was stamped (see
/// `isSettled`); such a stamp is not kept, and the file is read and hashed
/// the next time too. The server and publish use it to see a new build state
/// or a file they already hold.
package struct FileStamp: Hashable, Sendable, CustomStringConvertible {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    /// Nanoseconds since 1970.
    package var modified: Int64
    package var changed: Int64
    /// True for a regular file (not a folder or a device).
    package var isRegularFile: Bool

    /// The stamp of the file at `path` (links followed); nil when it is missing.
    package init?(path: String) {
        var info = stat()
        // A native string is already NUL-terminated: no copy of the path per call.
        guard path.withCString({ stat($0, &info) }) == 0 else { return nil }
        self.init(info)
    }

    /// The stamp of the open file `descriptor`; nil when fstat fails.
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The modification time as seconds and nanoseconds, as `utimensat` takes it.
    package var modifiedSeconds: Int {
        Int(modified >= 0 ? modified / 1_000_000_000 : (modified - 999_999_999) / 1_000_000_000)
    }
    package var modifiedNanoseconds: Int { Int(modified - Int64(modifiedSeconds) * 1_000_000_000) }

    /// `size:inode:modified:changed` (nanoseconds), as a build state stores it.
    /// Written digit by digit: a build makes one per content file, 100,000 of them.
    package var description: String {
        String(unsafeUninitializedCapacity: Self.maximumLength) { write(to: $0) }
    }

    /// Whether `text` is `description`: checked without making a string (a build checks one per content file).
    package func isSpelled(as text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count <= Self.maximumLength else { return false }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumLength) { buffer in
                let count = write(to: buffer)
                return count == utf8.count && memcmp(buffer.baseAddress!, utf8.baseAddress!, count) == 0
            }
        }
    }

    /// Four numbers of up to 20 digits and a sign, and three colons.
    private static let maximumLength = 4 * 21

    /// Writes `description` to the start of `buffer`; returns its length.
    private func write(to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 0
        func append(_ value: UInt64) {
            var digits: (UInt64, Int) = (value, 0)
            repeat {
                digits.1 += 1
                digits.0 /= 10
            } while digits.0 > 0
            var rest = value
            for index in stride(from: count + digits.1 - 1, through: count, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            count += digits.1
        }
        func append(signed value: Int64) {
            if value < 0 {
                buffer[count] = UInt8(ascii: "-")
                count += 1
            }
            append(value.magnitude)
        }
        append(signed: size)
        buffer[count] = UInt8(ascii: ":")
        count += 1
        append(inode)
        buffer[count] = UInt8(ascii: ":")
        count += 1
        append(signed: modified)
        buffer[count] = UInt8(ascii: ":")
        count += 1
        append(signed: changed)
        return count
    }

    /// Whether the file was last written more than `margin` seconds before
    /// `now`: a write in the same clock tick as the stamp could leave size
    /// and times as they were (file systems keep times in ticks of up to 2 s).
    package func isSettled(now: Int64 = FileStamp.now(), margin: Int64 = 2_000_000_000) -> Bool {
        now - max(modified, changed) > margin
    }

    /// The real-time clock in nanoseconds, the clock file times come from.
    package static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
