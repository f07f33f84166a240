package import Foundation
package import PassModel

/// The certificate and key of one APNs topic, as the build's signing configuration names them (passforge.yml
/// `signing:`, else PASSFORGE_SIGNING_*): Apple's "Adding a Web Service to Update Passes" pushes a pass update
/// on the pass type identifier's topic with its Pass Type ID certificate; orders alike with the Order Type ID
/// certificate (vapor-community/wallet).
package struct APNsCertificate: Sendable {
    /// The certificate's UID: the pass or order type identifier it was issued for (APNs takes the topic from it).
    package var userID: String?
    package var subject: String
    package var notBefore: Date
    package var notAfter: Date
    /// The certificate, then Apple's intermediate (WWDR), in PEM.
    package var chainPEM: [UInt8]
    package var privateKeyPEM: [UInt8]
    /// The development chain, which APNs refuses.
    package var isDevelopment: Bool

    package init(
        userID: String?, subject: String, notBefore: Date, notAfter: Date, chainPEM: [UInt8], privateKeyPEM: [UInt8],
        isDevelopment: Bool
    ) {
        (self.userID, self.subject, self.notBefore, self.notAfter) = (userID, subject, notBefore, notAfter)
        (self.chainPEM, self.privateKeyPEM, self.isDevelopment) = (chainPEM, privateKeyPEM, isDevelopment)
    }

    func isValid(at date: Date) -> Bool { notBefore <= date && date <= notAfter }
}

/// Where push finds the certificate of a topic: the command line hands in the build's signing identities
/// (`SigningIdentities`), read as APNs needs them, so that push links neither the build nor OpenSSL.
package protocol APNsIdentityProvider: Sendable {
    /// The certificate for items of `kind` and type `topic` by team `teamIdentifier`.
    func apnsCertificate(topic: String, teamIdentifier: String, kind: WalletItemKind) throws -> APNsCertificate
}
