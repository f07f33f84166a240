// The only file in PassPackage that calls zlib.

import CZlib

/// Raw deflate (RFC 1951, what a zip entry holds) and the zip CRC-32, on zlib.
enum Deflate {
    /// The CRC-32 a zip entry records for `bytes`.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(CZlib.crc32(0, buffer.baseAddress, uInt(buffer.count)))
        }
    }

    /// `bytes` deflated, or nil when deflating would not make them smaller
    /// (the entry is then stored).
    ///
    /// Every call has its own stream, sized to the input: a pass's files are a
    /// few KB, and a window no larger than the input compresses them as well
    /// as a full 32 KB one while allocating and clearing far less.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard !bytes.isEmpty else { return nil }
        var windowBits: Int32 = 9
        while windowBits < 15 && (1 << windowBits) < bytes.count { windowBits += 1 }
        let memoryLevel = max(1, min(8, windowBits - 6))
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -windowBits, memoryLevel, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count)))
        var finished = false
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            bytes.withUnsafeBufferPointer { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(capacity)
                finished = deflate(&stream, Z_FINISH) == Z_STREAM_END
                count = finished ? Int(stream.total_out) : 0
            }
        }
        guard finished, output.count < bytes.count else { return nil }
        return output
    }
}
