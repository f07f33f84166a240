// The only file in PassPackage that calls zlib.

import CZlib

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// The stream is sized to the input: a pass's files are a few KB, and a
    /// window no larger than the input compresses them as well as a full
    /// 32 KB one while allocating and clearing far less. Each thread keeps its
    /// streams (one per window size) and resets them between calls.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard !bytes.isEmpty else { return nil }
        var windowBits: Int32 = 9
        while windowBits < 15 && (1 << windowBits) < bytes.count { windowBits += 1 }
        guard let stream = DeflateStreams.current?.stream(windowBits: windowBits) else { return nil }
        defer { deflateReset(stream) }
        let capacity = Int(deflateBound(stream, uLong(bytes.count)))
        var finished = false
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            bytes.withUnsafeBufferPointer { input in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = uInt(capacity)
                finished = deflate(stream, Z_FINISH) == Z_STREAM_END
                count = finished ? Int(stream.pointee.total_out) : 0
            }
        }
        guard finished, output.count < bytes.count else { return nil }
        return output
    }
}

/// One thread's deflate streams, by window size, ready for `deflate` (reset
/// after each use). Owned by the thread through a pthread key and freed
/// when the thread ends; never shared.
private final class DeflateStreams {
    private var streams: [UnsafeMutablePointer<z_stream>?] = Array(repeating: nil, count: 16)

    /// This thread's streams, made on first use; nil if the key is missing.
    static var current: DeflateStreams? {
        guard let key = deflateStreamsKey else { return nil }
        if let existing = pthread_getspecific(key) {
            return Unmanaged<DeflateStreams>.fromOpaque(existing).takeUnretainedValue()
        }
        let streams = DeflateStreams()
        // The retain is released by the key's destructor when the thread ends.
        guard pthread_setspecific(key, Unmanaged.passRetained(streams).toOpaque()) == 0 else { return nil }
        return streams
    }

    /// The stream for `windowBits` (9–15), with the memory level that goes with it.
    func stream(windowBits: Int32) -> UnsafeMutablePointer<z_stream>? {
        if let stream = streams[Int(windowBits)] { return stream }
        let memoryLevel = max(1, min(8, windowBits - 6))
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard
            deflateInit2_(
                stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -windowBits, memoryLevel, Z_DEFAULT_STRATEGY,
                ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            stream.deallocate()
            return nil
        }
        streams[Int(windowBits)] = stream
        return stream
    }

    deinit {
        for case let stream? in streams {
            deflateEnd(stream)
            stream.deallocate()
        }
    }
}

/// The pthread key under which each thread keeps its `DeflateStreams`.
private let deflateStreamsKey: pthread_key_t? = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key) { streams in
        guard let streams else { return }
        Unmanaged<AnyObject>.fromOpaque(streams).release()
    }
    return created == 0 ? key : nil
}()
