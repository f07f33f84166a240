import Foundation
import PassBuild
import PassModel
import PassPackage
import PassPush

/// Push's APNs client identities are the build's signing identities (passforge.yml `signing:`, else
/// PASSFORGE_SIGNING_*): read here, where both are linked, so that PassPush needs no OpenSSL.
extension SigningIdentities: APNsIdentityProvider {
    package func apnsCertificate(topic: String, teamIdentifier: String, kind: WalletItemKind) throws -> APNsCertificate
    {
        let (identity, isDevelopment) = try signingIdentity(
            typeIdentifier: topic, teamIdentifier: teamIdentifier, kind: kind)
        return APNsCertificate(
            userID: identity.certificate.userID, subject: identity.certificate.subject,
            notBefore: identity.certificate.notBefore,
            notAfter: identity.certificate.notAfter, chainPEM: identity.certificatePEM + identity.wwdrCertificatePEM,
            privateKeyPEM: identity.exportPrivateKeyPEM(), isDevelopment: isDevelopment)
    }
}
