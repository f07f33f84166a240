#if canImport(Glibc)
import Glibc
#endif

/// What a build remembers of a file it hashed, to skip reading it again:
/// its size, modification and status-change times, and inode. Equal stamps
/// mean the same bytes, except when the file changed within the clock's
/// granularity of the moment it was stamped (see `isSettled`); such a stamp
/// is not kept, and the file is read and hashed the next time too.
package struct FileStamp: Hashable, Sendable, CustomStringConvertible {
    package var size: Int64
    package var inode: UInt64
    package var modified: Int64
    package var changed: Int64

    /// The stamp of the file at `path` (links followed); nil when it is missing.
    package init?(path: String) {
        var info = stat()
        // A native string is already NUL-terminated: no copy of the path per call.
        guard path.withCString({ stat($0, &info) }) == 0 else { return nil }
        size = Int64(info.st_size)
        inode = UInt64(info.st_ino)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

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
