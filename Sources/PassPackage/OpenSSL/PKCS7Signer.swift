import COpenSSL
package import Foundation

/// Signs manifests with OpenSSL's own PKCS#7 API (`PKCS7_sign`,
/// `PKCS7_final`, `i2d_PKCS7`): the reference encoding.
///
/// `CMSSigner` uses it for the first signature of each signing-time form,
/// to learn the DER it then reuses, and for keys it has no template for.
/// Tests compare `CMSSigner`'s bytes with this one's.
///
/// `@unchecked Sendable`: every stored property is immutable after `init`,
/// and OpenSSL allows concurrent signing with one key and concurrent
/// read-only use of certificates and `EVP_MD`
/// (https://www.openssl.org/docs/man3.0/man7/openssl-threads.html).
package final class PKCS7Signer: ManifestSigning, @unchecked Sendable {
    private let certificate: X509Certificate
    private let intermediate: X509Certificate
    private let key: PrivateKey
    /// SHA-256, fetched once: looking an algorithm up by name on every
    /// signature costs a locked method-store query
    /// (https://www.openssl.org/docs/man3.0/man7/crypto.html, "Performance").
    private let digest: OpaquePointer

    /// PKCS7_BINARY: sign the bytes as they are (no MIME canonicalisation of
    /// line endings, which would change the digest of manifest.json).
    /// PKCS7_DETACHED: the manifest is a separate file in the pass, not inside
    /// the signature. PKCS7_NOSMIMECAP: leave out the S/MIME capabilities
    /// attribute, which Wallet does not use. Signing time is still added
    /// (https://www.openssl.org/docs/man3.0/man3/PKCS7_sign.html).
    private static let flags = Int32(PKCS7_BINARY | PKCS7_DETACHED | PKCS7_NOSMIMECAP)

    init(certificate: X509Certificate, intermediate: X509Certificate, key: PrivateKey) throws(SigningError) {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else {
            throw .openSSLFailure(operation: "load SHA-256", reason: OpenSSL.drainErrors())
        }
        self.certificate = certificate
        self.intermediate = intermediate
        self.key = key
        self.digest = digest
    }

    deinit {
        EVP_MD_free(digest)
    }

    package func signature(forManifest manifest: [UInt8], signingTime: Date) throws(SigningError) -> [UInt8] {
        OpenSSL.clearErrors()
        func failure(_ operation: String) -> SigningError {
            .openSSLFailure(operation: operation, reason: OpenSSL.drainErrors())
        }

        // PKCS7_PARTIAL: create the SignedData without signers, so the signer
        // can be added with the pre-fetched digest and a chosen signing time
        // before PKCS7_final computes the signature.
        guard let p7 = PKCS7_sign(nil, nil, nil, nil, Self.flags | PKCS7_PARTIAL) else {
            throw failure("create the SignedData")
        }
        defer { PKCS7_free(p7) }

        // Also embeds the signer certificate (no PKCS7_NOCERTS).
        guard let signerInfo = PKCS7_sign_add_signer(p7, certificate.pointer, key.pointer, digest, Self.flags) else {
            throw failure("add the signer")
        }
        // Apple requires the signer certificate and the WWDR intermediate in
        // the signature (PassKit Package Format Reference, "Signing the Pass").
        guard PKCS7_add_certificate(p7, intermediate.pointer) == 1 else {
            throw failure("embed the WWDR certificate")
        }
        // Without a signing-time attribute iOS rejects the pass with
        // "Signature must contain a signing date".
        // PKCS7_final would add the current time itself; setting it here lets
        // the caller date the whole pass consistently.
        // Added with the time's own type: PKCS7_add0_attrib_signing_time
        // (OpenSSL 3.0) always tags it UTCTime, which for a GeneralizedTime
        // (from 2050 on) gives a "UTCTime" with a four-digit year. RFC 5652
        // §11.3: UTCTime for 1950–2049, GeneralizedTime otherwise.
        guard let time = OpenSSL.makeTime(signingTime) else { throw failure("encode the signing time") }
        guard PKCS7_add_signed_attribute(signerInfo, NID_pkcs9_signingTime, ASN1_STRING_type(time), time) == 1 else {
            ASN1_TIME_free(time)
            throw failure("add the signing time")
        }

        let finished: Bool? = OpenSSL.withReadOnlyBIO(manifest) { bio in
            PKCS7_final(p7, bio, Self.flags) == 1
        }
        guard finished == true else { throw failure("sign the manifest") }

        let length = i2d_PKCS7(p7, nil)
        guard length > 0 else { throw failure("encode the signature") }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            count = max(0, Int(i2d_PKCS7(p7, &cursor)))
        }
    }
}
