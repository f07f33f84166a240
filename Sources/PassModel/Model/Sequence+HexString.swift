extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, two digits per byte: how passforge writes every
    /// digest (manifest.json's SHA-1s, fingerprints, ETags).
    package var hexString: String {
        // Written straight into the string's storage: no array of digits per call (a build makes hundreds of
        // thousands).
        let bytes = Array(self)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = hexDigit(byte >> 4)
                buffer[2 * index + 1] = hexDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }
}

private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? 0x30 + value : 0x57 + value
}
