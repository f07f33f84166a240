extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, two digits per byte: how passforge writes every
    /// digest (manifest.json's SHA-1s, fingerprints, ETags).
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        for byte in self {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
