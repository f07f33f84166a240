import CZlib

/// Small PNG images made in memory (deflated with zlib): the placeholder
/// icons and logos of a new project.
enum PNGImage {
    /// An RGB image: `background`, with a centred rounded block of `foreground`.
    static func make(width: Int, height: Int, background: (UInt8, UInt8, UInt8), foreground: (UInt8, UInt8, UInt8))
        throws(ScaffoldError) -> [UInt8]
    {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        let insetX = width / 5
        let insetY = height / 5
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                let inside = x >= insetX && x < width - insetX && y >= insetY && y < height - insetY
                let c = inside ? foreground : background
                raw += [c.0, c.1, c.2]
            }
        }
        var header: [UInt8] = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", try deflate(raw)) + chunk("IEND", [])
    }

    static func deflate(_ data: [UInt8]) throws(ScaffoldError) -> [UInt8] {
        var size = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { target in
            data.withUnsafeBufferPointer { source in
                compress2(target.baseAddress, &size, source.baseAddress, uLong(data.count), 9)
            }
        }
        guard status == Z_OK else {
            throw ScaffoldError(.compression, "zlib could not compress an image (status \(status))")
        }
        return Array(out.prefix(Int(size)))
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = body.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
