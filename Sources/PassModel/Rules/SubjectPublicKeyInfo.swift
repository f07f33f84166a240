/// Just enough DER to recognise an X.509 SubjectPublicKeyInfo of a P-256 key:
///
///     SEQUENCE {
///       SEQUENCE { OID 1.2.840.10045.2.1 (id-ecPublicKey), OID 1.2.840.10045.3.1.7 (prime256v1) }
///       BIT STRING { 0x00, point }
///     }
enum SubjectPublicKeyInfo {
    enum Problem: Equatable {
        case notDER
        case notEllipticCurve(algorithm: String)
        case notP256(curve: String?)
        case badPoint
    }

    static let ecPublicKey = "1.2.840.10045.2.1"
    static let prime256v1 = "1.2.840.10045.3.1.7"

    /// "RSA (1.2.840.113549.1.1.1)" for the OIDs people are likely to use by mistake.
    static func name(of oid: String) -> String {
        let names = [
            "1.2.840.113549.1.1.1": "RSA",
            "1.3.132.0.34": "P-384 (secp384r1)",
            "1.3.132.0.35": "P-521 (secp521r1)",
            "1.3.132.0.10": "secp256k1",
            "1.3.101.110": "X25519",
            "1.3.101.112": "Ed25519",
        ]
        return names[oid].map { "\($0), \(oid)" } ?? oid
    }

    static func checkP256(_ der: [UInt8]) -> Problem? {
        guard let outer = element(in: der, at: 0), outer.tag == 0x30, outer.end == der.count,
            let algorithm = element(in: der, at: outer.contentStart), algorithm.tag == 0x30,
            let keyBits = element(in: der, at: algorithm.end), keyBits.tag == 0x03, keyBits.end == outer.end,
            let algorithmOID = element(in: der, at: algorithm.contentStart), algorithmOID.tag == 0x06
        else { return .notDER }
        let algorithmName = oidString(Array(der[algorithmOID.contentStart..<algorithmOID.end]))
        guard algorithmName == ecPublicKey else { return .notEllipticCurve(algorithm: algorithmName) }
        var curve: String?
        if algorithmOID.end < algorithm.end, let parameters = element(in: der, at: algorithmOID.end),
            parameters.tag == 0x06
        {
            curve = oidString(Array(der[parameters.contentStart..<parameters.end]))
        }
        guard curve == prime256v1 else { return .notP256(curve: curve) }
        let bits = der[keyBits.contentStart..<keyBits.end]
        guard let unused = bits.first, unused == 0 else { return .badPoint }
        let point = bits.dropFirst()
        switch (point.first, point.count) {
        case (0x04, 65), (0x02, 33), (0x03, 33): return nil
        default: return .badPoint
        }
    }

    /// One DER element at `offset`: its tag and where its content starts and ends.
    static func element(in der: [UInt8], at offset: Int) -> (tag: UInt8, contentStart: Int, end: Int)? {
        guard offset + 2 <= der.count else { return nil }
        let tag = der[offset]
        var index = offset + 1
        let first = der[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard (1...4).contains(count), index + count <= der.count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(der[index])
                index += 1
            }
        }
        guard length <= der.count - index else { return nil }
        return (tag, index, index + length)
    }

    /// "1.2.840.10045.2.1" from the content bytes of an OBJECT IDENTIFIER.
    static func oidString(_ bytes: [UInt8]) -> String {
        guard let first = bytes.first else { return "(empty)" }
        var parts = [first < 80 ? Int(first) / 40 : 2, first < 80 ? Int(first) % 40 : Int(first) - 80]
        var value = 0
        for byte in bytes.dropFirst() {
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 {
                parts.append(value)
                value = 0
            }
        }
        return parts.map(String.init).joined(separator: ".")
    }
}
