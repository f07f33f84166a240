import AtomicFiles
import COpenSSL
import Crypto
package import Foundation
import PassModel

/// A Pass Type ID certificate, its private key, and the Apple WWDR
/// intermediate that issued it: everything needed to sign a pass.
///
/// Formats are detected by content, not by file extension: the certificate
/// may be PEM, DER or a `.p12` that holds the key too; the key PEM (PKCS#8,
/// encrypted PKCS#8 or traditional, possibly encrypted) or DER; the WWDR
/// certificate PEM or DER.
///
/// `@unchecked Sendable`: the class is final and every stored property is a
/// `let` set in `init`; the wrapped OpenSSL objects are never mutated after
/// loading and are freed by their owners' `deinit`. OpenSSL supports
/// concurrent read-only use of `X509` and concurrent signing with one
/// `EVP_PKEY` (https://www.openssl.org/docs/man3.0/man7/openssl-threads.html).
/// Signing through the identity itself is therefore safe from any thread;
/// `makeSigner()` additionally avoids the lock contention of a shared RSA key.
package final class SigningIdentity: ManifestSigning, @unchecked Sendable {
    /// The environment variable named in password errors by default.
    package static let defaultPasswordSource = "PASSFORGE_SIGNING_PASSWORD"

    /// The Pass Type ID certificate.
    package let certificate: CertificateSummary
    /// The intermediate (Apple WWDR) certificate that issued `certificate`.
    package let wwdrCertificate: CertificateSummary

    let signingCertificate: X509Certificate
    let intermediate: X509Certificate
    let privateKey: PrivateKey
    private let sharedSigner: CMSSigner

    /// The pass type identifier the certificate is for (its subject UID).
    package var passTypeIdentifier: String? { certificate.userID }
    /// The Team ID the certificate belongs to (its subject OU).
    package var teamIdentifier: String? { certificate.organizationalUnit }

    /// Lowercase hex SHA-256 over the DER of the signing certificate and of
    /// the WWDR certificate. Both are embedded in every signature, so when
    /// this changes every pass must be signed again.
    package var fingerprint: String {
        SHA256.hash(data: certificate.derBytes + wwdrCertificate.derBytes).hexString
    }

    /// Loads an identity from files.
    ///
    /// - Parameters:
    ///   - certificatePath: PEM or DER certificate, or a `.p12` with the key.
    ///   - keyPath: the private key, when the certificate file holds none.
    ///   - password: password of the key or the `.p12`.
    ///   - wwdrCertificatePath: the WWDR intermediate; may be omitted when the
    ///     certificate file (PEM bundle or `.p12`) contains it.
    ///   - passwordSource: where the password came from, named in errors.
    package convenience init(
        certificatePath: String,
        keyPath: String? = nil,
        password: String? = nil,
        wwdrCertificatePath: String? = nil,
        passwordSource: String = SigningIdentity.defaultPasswordSource
    ) throws(SigningIdentityError) {
        // Without a key file the certificate file holds the key (a .p12, or a PEM bundle with it).
        if let keyPath {
            SecretFile.warnIfExposed(keyPath, holding: "a signing key")
        } else {
            SecretFile.warnIfExposed(certificatePath, holding: "a signing key (with its certificate)")
        }
        try self.init(
            certificate: SigningFile(contentsOf: certificatePath),
            key: keyPath.map { path throws(SigningIdentityError) in try SigningFile(contentsOf: path) },
            password: password,
            wwdrCertificate: wwdrCertificatePath.map { path throws(SigningIdentityError) in
                try SigningFile(contentsOf: path)
            },
            passwordSource: passwordSource
        )
    }

    /// Loads an identity from bytes; see `init(certificatePath:…)`.
    package convenience init(
        certificate certificateFile: SigningFile,
        key keyFile: SigningFile? = nil,
        password: String? = nil,
        wwdrCertificate wwdrFile: SigningFile? = nil,
        passwordSource: String = SigningIdentity.defaultPasswordSource
    ) throws(SigningIdentityError) {
        OpenSSL.loadProviders()
        let contents = try Self.readCertificateFile(
            certificateFile, password: password,
            passwordSource: passwordSource, hasKeyFile: keyFile != nil)
        let leaf = contents.leaf
        var key = contents.key
        // Where the key came from, for the message when it does not match.
        let keyPath = key != nil ? certificateFile.path : keyFile?.path ?? certificateFile.path
        if key == nil, let keyFile {
            key = try Self.parseKey(keyFile, password: password, passwordSource: passwordSource)
        }
        guard let key else { throw .missingPrivateKey(certificatePath: certificateFile.path) }
        guard leaf.matches(key) else {
            throw .keyDoesNotMatchCertificate(certificatePath: certificateFile.path, keyPath: keyPath)
        }
        let intermediate = try Self.intermediate(
            of: leaf, wwdrFile: wwdrFile, bundled: contents.bundled,
            certificatePath: certificateFile.path)
        try self.init(certificate: leaf, key: key, intermediate: intermediate)
    }

    private static func parseKey(
        _ file: SigningFile, password: String?, passwordSource: String
    ) throws(SigningIdentityError) -> PrivateKey {
        switch PrivateKey.parse(file.bytes, password: password) {
        case .success(let key): return key
        case .failure(.passwordRequired): throw .passwordRequired(path: file.path, passwordSource: passwordSource)
        case .failure(.wrongPassword): throw .wrongPassword(path: file.path, passwordSource: passwordSource)
        case .failure(.notAKey(let reason)): throw .notAPrivateKey(path: file.path, reason: reason)
        }
    }

    /// What a certificate file holds: its first certificate, the others, and a key when the file has one.
    private struct CertificateFileContents {
        var leaf: X509Certificate
        var bundled: [X509Certificate] = []
        var key: PrivateKey?
    }

    /// Reads a PEM file (certificates, and the key too when no key file is given), a DER certificate or a .p12.
    private static func readCertificateFile(
        _ file: SigningFile, password: String?, passwordSource source: String, hasKeyFile: Bool
    ) throws(SigningIdentityError) -> CertificateFileContents {
        if file.bytes.looksLikePEM {
            let certificates = X509Certificate.parseAll(file.bytes)
            guard let first = certificates.first else { throw .notACertificate(path: file.path) }
            var contents = CertificateFileContents(leaf: first, bundled: Array(certificates.dropFirst()))
            if !hasKeyFile && file.bytes.contains(ascii: "PRIVATE KEY-----") {
                contents.key = try parseKey(file, password: password, passwordSource: source)
            }
            return contents
        }
        if let der = X509Certificate.parseDER(file.bytes) {
            return CertificateFileContents(leaf: der)
        }
        switch PKCS12Bundle.parse(file.bytes, password: password) {
        case .success(let bundle):
            guard let certificate = bundle.certificate else { throw .notACertificate(path: file.path) }
            return CertificateFileContents(leaf: certificate, bundled: bundle.otherCertificates, key: bundle.key)
        case .failure(.notPKCS12):
            throw .notACertificate(path: file.path)
        case .failure(.passwordRequired):
            throw .passwordRequired(path: file.path, passwordSource: source)
        case .failure(.wrongPassword):
            throw .wrongPassword(path: file.path, passwordSource: source)
        case .failure(.undecryptable(let reason)):
            throw .unsupportedPKCS12(path: file.path, reason: reason)
        }
    }

    /// The certificate that issued `leaf`: from the WWDR file when given, else among the certificate file's others.
    private static func intermediate(
        of leaf: X509Certificate, wwdrFile: SigningFile?, bundled: [X509Certificate], certificatePath: String
    ) throws(SigningIdentityError) -> X509Certificate {
        if let wwdrFile {
            let candidates = X509Certificate.parseAll(wwdrFile.bytes)
            guard !candidates.isEmpty else { throw .wwdrNotACertificate(path: wwdrFile.path) }
            guard let issuer = candidates.first(where: { $0.issued(leaf) }) else {
                throw .wwdrDidNotIssueCertificate(
                    wwdrPath: wwdrFile.path,
                    certificatePath: certificatePath,
                    certificateIssuer: leaf.summary.issuer
                )
            }
            return issuer
        }
        guard let issuer = bundled.first(where: { $0.issued(leaf) }) else {
            throw .missingWWDRCertificate(certificatePath: certificatePath)
        }
        return issuer
    }

    /// An identity from already-checked parts (the development PKI).
    init(certificate: X509Certificate, key: PrivateKey, intermediate: X509Certificate) throws(SigningIdentityError) {
        self.signingCertificate = certificate
        self.intermediate = intermediate
        self.privateKey = key
        self.certificate = certificate.summary
        self.wwdrCertificate = intermediate.summary
        do {
            self.sharedSigner = try CMSSigner(certificate: certificate, intermediate: intermediate, key: key)
        } catch {
            throw .openSSLFailure(operation: "prepare the signer", reason: error.description)
        }
    }

    /// A signer for one worker thread, with its own copy of the private key.
    ///
    /// OpenSSL RSA keys keep one blinding value per key that only the first
    /// thread using the key may use without a lock; every other thread takes
    /// the key's lock for each signature (`rsa_get_blinding` in
    /// crypto/rsa/rsa_ossl.c). One copy per worker removes that contention.
    package func makeSigner() throws(SigningError) -> CMSSigner {
        guard let copy = privateKey.duplicate() else {
            throw .openSSLFailure(operation: "copy the private key", reason: OpenSSL.drainErrors())
        }
        return try CMSSigner(certificate: signingCertificate, intermediate: intermediate, key: copy)
    }

    /// A signer that uses OpenSSL's PKCS#7 API for every signature: the
    /// reference `CMSSigner` is checked against in tests.
    package func makePKCS7Signer() throws(SigningError) -> PKCS7Signer {
        try PKCS7Signer(certificate: signingCertificate, intermediate: intermediate, key: privateKey)
    }

    /// Signs with a signer shared by all callers of this identity. Safe from
    /// any thread; for many concurrent signatures use `makeSigner()` per
    /// worker instead.
    package func signature(forManifest manifest: [UInt8], signingTime: Date) throws(SigningError) -> [UInt8] {
        try sharedSigner.signature(forManifest: manifest, signingTime: signingTime)
    }

    /// The signing certificate, PEM.
    package var certificatePEM: [UInt8] { signingCertificate.pemBytes }

    /// The WWDR intermediate, PEM.
    package var wwdrCertificatePEM: [UInt8] { intermediate.pemBytes }

    /// The private key as unencrypted PKCS#8 PEM, for a TLS client identity
    /// (APNs). Keep it in memory only; never write or log it.
    package func exportPrivateKeyPEM() -> [UInt8] {
        privateKey.pemBytes
    }
}

/// The contents of a PKCS#12 (`.p12`) file.
struct PKCS12Bundle {
    var certificate: X509Certificate?
    var key: PrivateKey?
    var otherCertificates: [X509Certificate]

    enum ParseFailure: Error {
        case notPKCS12
        case passwordRequired
        case wrongPassword
        case undecryptable(reason: String)
    }

    static func parse(_ bytes: [UInt8], password: String?) -> Result<PKCS12Bundle, ParseFailure> {
        guard !bytes.isEmpty else { return .failure(.notPKCS12) }
        OpenSSL.loadProviders()
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }
        let p12 = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 else { return .failure(.notPKCS12) }
        defer { PKCS12_free(p12) }

        // Check the MAC first: it tells a wrong password apart from an
        // unsupported cipher, which PKCS12_parse reports the same way.
        // An absent password may mean "" or NULL, which PKCS#12 encodes
        // differently (https://www.openssl.org/docs/man3.0/man3/PKCS12_parse.html).
        if PKCS12_mac_present(p12) == 1 {
            let macOK = OpenSSL.withPassword(password) { cPassword in
                if let cPassword { return PKCS12_verify_mac(p12, cPassword, -1) == 1 }
                return PKCS12_verify_mac(p12, nil, 0) == 1 || PKCS12_verify_mac(p12, "", 0) == 1
            }
            if !macOK { return .failure(password == nil ? .passwordRequired : .wrongPassword) }
        }

        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var others: OpaquePointer?
        let parsed = OpenSSL.withPassword(password) { cPassword in
            PKCS12_parse(p12, cPassword, &key, &certificate, &others) == 1
        }
        guard parsed else { return .failure(.undecryptable(reason: OpenSSL.drainErrors())) }

        var bundle = PKCS12Bundle(
            certificate: certificate.map(X509Certificate.init(taking:)),
            key: key.map(PrivateKey.init(taking:)),
            otherCertificates: []
        )
        if let others {
            // sk_X509_pop_free is a macro; take ownership element by element.
            while OPENSSL_sk_num(others) > 0, let element = OPENSSL_sk_shift(others) {
                bundle.otherCertificates.append(X509Certificate(taking: OpaquePointer(element)))
            }
            OPENSSL_sk_free(others)
        }
        return .success(bundle)
    }
}
