import COpenSSL
import Synchronization

/// RSA PKCS#1 v1.5 signatures of SHA-256 digests with one private key: the
/// one private-key operation of a pass signature.
///
/// Signs with `EVP_PKEY_sign` on an `EVP_PKEY_CTX` set up once (padding and
/// digest), so a signature costs the RSA operation and little else. RSA
/// blinding stays as OpenSSL sets it: on.
///
/// `@unchecked Sendable`: the key and digest are immutable after `init`; the
/// context, which OpenSSL does not allow two threads to use at once, is held
/// by a mutex, and a caller that finds it busy signs with a context of its
/// own instead of waiting.
final class RSADigestSigner: @unchecked Sendable {
    private let key: PrivateKey
    private let sha256: OpaquePointer
    private let context: Mutex<ContextHandle>
    /// The length of every signature: the modulus size in bytes.
    let signatureLength: Int

    /// Nil when `key` is not an RSA key or OpenSSL cannot set up signing.
    init?(key: PrivateKey) {
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }
        guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA,
            let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
        else { return nil }
        guard let context = Self.makeContext(key: key, sha256: sha256, signing: true) else {
            EVP_MD_free(sha256)
            return nil
        }
        self.key = key
        self.sha256 = sha256
        self.context = Mutex(ContextHandle(pointer: context))
        signatureLength = Int(EVP_PKEY_get_size(key.pointer))
    }

    deinit {
        context.withLock { EVP_PKEY_CTX_free($0.pointer) }
        EVP_MD_free(sha256)
    }

    /// Signs the 32-byte SHA-256 `digest` into `signature`, which must be
    /// `signatureLength` bytes. False when OpenSSL fails.
    func sign(digest: UnsafeRawBufferPointer, into signature: UnsafeMutableRawBufferPointer) -> Bool {
        guard digest.count == 32, signature.count == signatureLength else { return false }
        func sign(with context: OpaquePointer) -> Bool {
            var length = signature.count
            return EVP_PKEY_sign(
                context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), &length,
                digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count) == 1
                && length == signature.count
        }
        if let signed = context.withLockIfAvailable({ sign(with: $0.pointer) }) { return signed }
        guard let context = Self.makeContext(key: key, sha256: sha256, signing: true) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        return sign(with: context)
    }

    /// Whether `signature` is this key's signature of the SHA-256 `digest`.
    func verifies(signature: [UInt8], digest: [UInt8]) -> Bool {
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }
        guard let context = Self.makeContext(key: key, sha256: sha256, signing: false) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        return EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
    }

    /// An `EVP_PKEY_CTX`, only ever used with the mutex that holds it locked.
    private struct ContextHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// A context for PKCS#1 v1.5 over SHA-256 (the DigestInfo is built by
    /// OpenSSL, as for the signatures `PKCS7_final` makes).
    private static func makeContext(key: PrivateKey, sha256: OpaquePointer, signing: Bool) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        guard (signing ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context)) == 1,
            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(context, sha256) == 1
        else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }
}
