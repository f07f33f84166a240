// nfc (pass-format-notes.md, "Other keys": message ≤ 64 bytes,
// encryptionPublicKey a base64 X.509 SubjectPublicKeyInfo with a P-256 key).

extension ValidationRun {
    mutating func checkNFC() {
        guard let nfc = object("nfc", of: root, at: .root) else { return }
        let base: KeyPath = [.key("nfc")]
        reportUnknownKeys(in: nfc, at: base, known: NFC.CodingKeys.allCases.map(\.rawValue), place: "nfc")
        if nfc["message"] == nil {
            error(base.appending("message"), "nfc.message", "nfc has no message; add \"message\": the payload (at most 64 bytes) that an NFC reader receives")
        } else if let message = string("message", of: nfc, at: base), message.utf8.count > 64 {
            error(
                base.appending("message"), "nfc.message.length",
                "nfc.message is \(message.utf8.count) bytes of UTF-8, but NFC readers receive at most 64; shorten it (e.g. send an ID and look the rest up)"
            )
        }
        let keyPath = base.appending("encryptionPublicKey")
        if nfc["encryptionPublicKey"] == nil {
            warning(
                keyPath, "nfc.encryptionPublicKey.missing",
                "nfc has no encryptionPublicKey; Value Added Services readers need the terminal's P-256 public key (base64 DER SubjectPublicKeyInfo) to read the message, so add it"
            )
        } else if let key = string("encryptionPublicKey", of: nfc, at: base), let problem = Self.publicKeyProblem(key) {
            error(keyPath, "nfc.encryptionPublicKey", "nfc.encryptionPublicKey \(problem)")
        }
        checkBoolean("requiresAuthentication", of: nfc, at: base)
    }

    /// Why `text` is not a base64 DER SubjectPublicKeyInfo of a P-256 key, or nil when it is one.
    static func publicKeyProblem(_ text: String) -> String? {
        if text.contains("-----BEGIN") {
            return "is a PEM block; remove the -----BEGIN PUBLIC KEY----- and -----END PUBLIC KEY----- lines and the line breaks, keeping only the base64 text"
        }
        guard let der = Base64.decode(text) else {
            return "is not valid base64; give the DER SubjectPublicKeyInfo of the reader's P-256 key in base64, e.g. from `openssl ec -pubout -outform DER | base64`"
        }
        switch SubjectPublicKeyInfo.checkP256(der) {
        case nil:
            return nil
        case .notDER:
            return "decodes, but not to a DER SubjectPublicKeyInfo; export the key with `openssl ec -pubout -outform DER` and base64 it"
        case .notEllipticCurve(let oid):
            return "holds a key of algorithm \(SubjectPublicKeyInfo.name(of: oid)), not an elliptic-curve key (id-ecPublicKey 1.2.840.10045.2.1); NFC passes need a P-256 (prime256v1) key"
        case .notP256(let curve):
            return "holds an elliptic-curve key on curve \(curve.map(SubjectPublicKeyInfo.name(of:)) ?? "(none given)"), not P-256 (prime256v1, 1.2.840.10045.3.1.7); generate the key with `openssl ecparam -name prime256v1 -genkey`"
        case .badPoint:
            return "holds a P-256 key whose point is not 65 (uncompressed) or 33 (compressed) bytes; export the key again"
        }
    }
}

/// Standard base64 (RFC 4648 §4) with optional padding; nothing else is accepted.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }  // data after padding
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "/"): values.append(63)
            default: return nil
            }
        }
        guard !values.isEmpty, values.count % 4 != 1, padding <= 2 else { return nil }
        if padding > 0, (values.count + padding) % 4 != 0 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var accumulator: UInt32 = 0
            for value in chunk { accumulator = accumulator << 6 | UInt32(value) }
            accumulator <<= UInt32(6 * (4 - chunk.count))
            let byteCount = chunk.count - 1
            for k in 0..<byteCount { out.append(UInt8((accumulator >> UInt32(16 - 8 * k)) & 0xFF)) }
            index += 4
        }
        return out
    }
}

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
        if algorithmOID.end < algorithm.end, let parameters = element(in: der, at: algorithmOID.end), parameters.tag == 0x06 {
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
