package import PassModel

/// The TLS client identity APNs authenticates a pass's pushes with: the Pass
/// Type ID certificate that also signs the pass (Apple's "Adding a Web Service
/// to Update Passes": pass pushes use certificate-based authentication with
/// that certificate), plus its private key. For an order's pushes, the Order
/// Type ID certificate (`kind` order), which names it in messages.
///
/// The caller loads the certificate and key (PEM, encrypted PEM or PKCS#12)
/// elsewhere and hands over unencrypted PEM bytes. They stay in memory: this
/// type never writes them to disk, and its description, debug description and
/// mirror are redacted so that logging or `dump` cannot leak the key.
package struct APNsClientIdentity: Sendable {
    /// The leaf certificate first, then any intermediates (e.g. Apple WWDR), as PEM.
    package var certificateChainPEM: [UInt8]
    /// The leaf's private key as unencrypted PEM.
    package var privateKeyPEM: [UInt8]
    /// Whose certificate it is: a Pass Type ID or an Order Type ID certificate.
    package var kind: WalletItemKind

    package init(certificateChainPEM: [UInt8], privateKeyPEM: [UInt8], kind: WalletItemKind = .pass) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.kind = kind
    }
}

extension APNsClientIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "APNsClientIdentity(<redacted>)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
