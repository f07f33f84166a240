// nfc ("Pass.NFC" in Apple's Wallet Passes documentation): message ≤ 64
// bytes and encryptionPublicKey (a base64 X.509 SubjectPublicKeyInfo with a
// P-256 key) are both required.

extension ValidationRun {
    mutating func checkNFC() {
        guard let nfc = object("nfc", of: root, at: .root) else { return }
        let base: JSONPath = [.key("nfc")]
        reportUnknownKeys(in: nfc, at: base, known: NFC.CodingKeys.allCases.map(\.rawValue), place: "nfc")
        if nfc["message"] == nil {
            error(
                base.appending("message"), "nfc.message",
                "nfc has no message; add \"message\": the payload (at most 64 bytes) that an NFC reader receives")
        } else if let message = string("message", of: nfc, at: base), message.utf8.count > 64 {
            error(
                base.appending("message"), "nfc.message.length",
                "nfc.message is \(message.utf8.count) bytes of UTF-8, but NFC readers receive at "
                    + "most 64; shorten it (e.g. send an ID and look the rest up)"
            )
        }
        let keyPath = base.appending("encryptionPublicKey")
        if nfc["encryptionPublicKey"] == nil {
            error(
                keyPath, "nfc.encryptionPublicKey.missing",
                "nfc has no encryptionPublicKey, which is required: Value Added Services readers need the "
                    + "terminal's P-256 public key (base64 DER SubjectPublicKeyInfo) to read the message, so add it"
            )
        } else if let key = string("encryptionPublicKey", of: nfc, at: base), let problem = Self.publicKeyProblem(key) {
            error(keyPath, "nfc.encryptionPublicKey", "nfc.encryptionPublicKey \(problem)")
        }
        checkBoolean("requiresAuthentication", of: nfc, at: base)
        // Apple: a pass shared to a device older than iOS 13.1 would skip the authentication.
        if nfc["requiresAuthentication"] == .bool(true), root["sharingProhibited"] != .bool(true) {
            warning(
                base.appending("requiresAuthentication"), "nfc.requiresAuthentication.sharing",
                "nfc.requiresAuthentication is true, but the pass can be shared, and iOS before 13.1 "
                    + "ignores the authentication; add \"sharingProhibited\": true"
            )
        }
    }

    /// Why `text` is not a base64 DER SubjectPublicKeyInfo of a P-256 key, or nil when it is one.
    static func publicKeyProblem(_ text: String) -> String? {
        if text.contains("-----BEGIN") {
            return "is a PEM block; remove the -----BEGIN PUBLIC KEY----- and -----END PUBLIC "
                + "KEY----- lines and the line breaks, keeping only the base64 text"
        }
        guard let der = Base64.decode(text) else {
            return "is not valid base64; give the DER SubjectPublicKeyInfo of the reader's P-256 key in "
                + "base64, e.g. from `openssl ec -pubout -outform DER | base64`"
        }
        switch SubjectPublicKeyInfo.checkP256(der) {
        case nil:
            return nil
        case .notDER:
            return "decodes, but not to a DER SubjectPublicKeyInfo; export the key with "
                + "`openssl ec -pubout -outform DER` and base64 it"
        case .notEllipticCurve(let oid):
            return "holds a key of algorithm \(SubjectPublicKeyInfo.name(of: oid)), not an elliptic-curve key "
                + "(id-ecPublicKey 1.2.840.10045.2.1); NFC passes need a P-256 (prime256v1) key"
        case .notP256(let curve):
            return "holds an elliptic-curve key on curve "
                + "\(curve.map(SubjectPublicKeyInfo.name(of:)) ?? "(none given)"), not P-256 "
                + "(prime256v1, 1.2.840.10045.3.1.7); generate the key with `openssl ecparam -name "
                + "prime256v1 -genkey`"
        case .badPoint:
            return
                "holds a P-256 key whose point is not 65 (uncompressed) or 33 (compressed) bytes; export the key again"
        }
    }
}
