/// The `nfc` object: what an NFC reader receives (Value Added Services).
package struct NFC: Sendable, Hashable, Codable {
    /// At most 64 bytes of UTF-8.
    package var message: String
    /// Base64 DER of an X.509 SubjectPublicKeyInfo holding a P-256 key.
    package var encryptionPublicKey: String?
    package var requiresAuthentication: Bool?

    package init(message: String, encryptionPublicKey: String? = nil, requiresAuthentication: Bool? = nil) {
        self.message = message
        self.encryptionPublicKey = encryptionPublicKey
        self.requiresAuthentication = requiresAuthentication
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case message, encryptionPublicKey, requiresAuthentication
    }
}
