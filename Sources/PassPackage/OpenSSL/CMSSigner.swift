import Crypto
package import Foundation
import Synchronization

/// Makes the `signature` file of a pass: a detached PKCS#7 / CMS SignedData
/// over the bytes of `manifest.json`, DER-encoded, that embeds the signer
/// certificate and the WWDR intermediate and carries a signing-time signed
/// attribute (Apple, PassKit Package Format Reference, "Signing the Pass").
///
/// Conforming types must be safe to call from any thread.
package protocol ManifestSigning: Sendable {
    /// The DER signature over `manifest`, dated `signingTime`.
    func signature(forManifest manifest: [UInt8], signingTime: Date) throws(SigningError) -> [UInt8]
}

/// Signs manifests with one key, byte for byte as OpenSSL's PKCS#7 API
/// (`PKCS7Signer`) does, at little more than the cost of the RSA operation.
///
/// The first signature of each signing-time form (UTCTime, GeneralizedTime)
/// comes from `PKCS7Signer`; its DER becomes a `SignedDataTemplate` once the
/// RSA signature in it checks out against the signed attributes as this type
/// hashes them. Every later signature copies the template, writes the signing
/// time and the manifest's SHA-256 into it, hashes the signed attributes and
/// signs that hash: one RSA operation and two short SHA-256s. Keys other than
/// RSA, and DER that does not have the expected shape, are signed by
/// `PKCS7Signer` every time.
///
/// Make one per worker with `SigningIdentity.makeSigner()`. An instance is
/// safe to share between threads (`@unchecked Sendable`: the templates are
/// behind a mutex that is held only to read or store one, and
/// `RSADigestSigner` documents its own), but it is only contention-free when
/// one thread at a time uses it.
package final class CMSSigner: ManifestSigning, @unchecked Sendable {
    private let reference: PKCS7Signer
    private let rsa: RSADigestSigner?
    /// By `DERTime.tag`: the template, or nil when the reference DER of that
    /// form could not be used as one. No entry: not tried yet.
    private let templates = Mutex<[UInt8: SignedDataTemplate?]>([:])

    init(certificate: X509Certificate, intermediate: X509Certificate, key: PrivateKey) throws(SigningError) {
        reference = try PKCS7Signer(certificate: certificate, intermediate: intermediate, key: key)
        rsa = RSADigestSigner(key: key)
    }

    package func signature(forManifest manifest: [UInt8], signingTime: Date) throws(SigningError) -> [UInt8] {
        guard let rsa, let time = DERTime(signingTime) else {
            return try reference.signature(forManifest: manifest, signingTime: signingTime)
        }
        let digest = SHA256.hash(data: manifest)
        switch templates.withLock({ $0[time.tag] }) {
        case .some(.some(let template)):
            guard let der = template.signedData(signingTime: time, messageDigest: digest, signer: rsa) else {
                throw .openSSLFailure(operation: "sign the manifest", reason: OpenSSL.drainErrors())
            }
            return der
        case .some(.none):
            return try reference.signature(forManifest: manifest, signingTime: signingTime)
        case .none:
            let der = try reference.signature(forManifest: manifest, signingTime: signingTime)
            let template = SignedDataTemplate(
                signedData: der, signingTime: time, messageDigest: Array(digest),
                signatureLength: rsa.signatureLength
            )
            .flatMap { template in
                rsa.verifies(signature: Array(der[template.signature]), digest: template.attributesDigest(in: der))
                    ? template : nil
            }
            templates.withLock { $0[time.tag] = .some(template) }
            return der
        }
    }

    /// Whether signatures dated `signingTime` come from a template (false
    /// until the first one of its form has been made). For tests.
    package func usesTemplate(for signingTime: Date) -> Bool {
        guard let time = DERTime(signingTime) else { return false }
        return templates.withLock { $0[time.tag] ?? nil } != nil
    }
}

extension ManifestSigning {
    /// The signature over `manifest`, dated now.
    package func signature(forManifest manifest: [UInt8]) throws(SigningError) -> [UInt8] {
        try signature(forManifest: manifest, signingTime: Date())
    }
}
