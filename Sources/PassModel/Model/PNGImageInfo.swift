/// The header facts of a PNG file, read from its signature and IHDR chunk.
///
/// No widely used pass validator checks that a `.png` really is a PNG or
/// what size it has, so passforge reads the IHDR
/// (the first chunk of every PNG, fixed at 13 bytes) and its CRC.
package struct PNGImageInfo: Sendable, Hashable {
    package var width: Int
    package var height: Int
    package var bitDepth: UInt8
    package var colorType: UInt8

    package var size: PointSize { PointSize(width: width, height: height) }

    package init(width: Int, height: Int, bitDepth: UInt8 = 8, colorType: UInt8 = 6) {
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.colorType = colorType
    }

    /// Why bytes are not a readable PNG.
    package enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        case tooShort
        case notPNGSignature
        case missingHeader
        case headerChecksumMismatch
        case zeroSize

        package var description: String {
            switch self {
            case .tooShort: return "the file is too short to be a PNG"
            case .notPNGSignature:
                return
                    "the file does not start with the PNG signature (is it a JPEG or another format renamed to .png?)"
            case .missingHeader: return "the PNG does not start with an IHDR chunk"
            case .headerChecksumMismatch: return "the PNG header's checksum is wrong; the file is damaged"
            case .zeroSize: return "the PNG header gives a width or height of 0"
            }
        }
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the header of PNG `bytes`; throws when they are not a PNG.
    package init(bytes: [UInt8]) throws(ParseError) {
        guard bytes.count >= 8 else {
            throw bytes.starts(with: Self.signature.prefix(bytes.count)) ? .tooShort : .notPNGSignature
        }
        guard bytes.starts(with: Self.signature) else { throw .notPNGSignature }
        // signature (8) + length (4) + "IHDR" (4) + data (13) + CRC (4)
        guard bytes.count >= 33 else { throw .missingHeader }
        func uint32(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard uint32(8) == 13, Array(bytes[12..<16]) == Array("IHDR".utf8) else { throw .missingHeader }
        guard CRC32.checksum(bytes[12..<29]) == uint32(29) else { throw .headerChecksumMismatch }
        let width = Int(uint32(16))
        let height = Int(uint32(20))
        guard width > 0, height > 0 else { throw .zeroSize }
        self.init(width: width, height: height, bitDepth: bytes[24], colorType: bytes[25])
    }

    /// The header of PNG `bytes`, or `nil` when they are not a PNG.
    package static func parse(_ bytes: [UInt8]) -> PNGImageInfo? {
        try? PNGImageInfo(bytes: bytes)
    }
}

/// CRC-32 (ISO 3309, as PNG uses it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
