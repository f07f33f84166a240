import COpenSSL
import Foundation

/// A certificate and its private key, as made by `CertificateIssuance`.
struct IssuedCredential {
    var certificate: X509Certificate
    var key: PrivateKey
}

/// Makes RSA-2048 / SHA-256 certificates for the development PKI.
enum CertificateIssuance {
    enum NameField {
        case userID, commonName, organizationalUnit, organization

        var nid: Int32 {
            switch self {
            case .userID: NID_userId
            case .commonName: NID_commonName
            case .organizationalUnit: NID_organizationalUnitName
            case .organization: NID_organizationName
            }
        }
    }

    enum Kind {
        /// A CA; `pathLength` limits the CAs below it (nil: no limit).
        case authority(pathLength: Int?)
        /// An end-entity certificate that signs (a Pass Type ID certificate).
        case signer
    }

    struct Request {
        /// Subject attributes in certificate order.
        var subject: [(NameField, String)]
        var kind: Kind
        var notBefore: Date
        var notAfter: Date
    }

    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var reason: String
        var description: String { "OpenSSL failed to \(operation): \(reason)" }
    }

    /// A new key pair and a certificate for it, signed by `issuer`, or
    /// self-signed when `issuer` is nil.
    static func issue(_ request: Request, issuer: IssuedCredential?) throws(Failure) -> IssuedCredential {
        OpenSSL.loadProviders()
        OpenSSL.clearErrors()
        func failure(_ operation: String) -> Failure {
            Failure(operation: operation, reason: OpenSSL.drainErrors())
        }

        let key = try generateRSAKey()
        guard let x509 = X509_new() else { throw failure("allocate a certificate") }
        let certificate = X509Certificate(taking: x509)

        // Version 3 (encoded as 2), needed for extensions (RFC 5280 §4.1.2.1).
        guard X509_set_version(x509, 2) == 1 else { throw failure("set the version") }
        try setRandomSerialNumber(x509)

        guard let name = X509_NAME_new() else { throw failure("allocate a name") }
        defer { X509_NAME_free(name) }
        for (field, value) in request.subject {
            let added = X509_NAME_add_entry_by_NID(name, field.nid, MBSTRING_UTF8, value, -1, -1, 0)
            guard added == 1 else { throw failure("add \(value) to the subject") }
        }
        guard X509_set_subject_name(x509, name) == 1,
            X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? name) == 1
        else { throw failure("set the names") }

        guard let notBefore = OpenSSL.makeTime(request.notBefore) else { throw failure("encode notBefore") }
        defer { ASN1_TIME_free(notBefore) }
        guard let notAfter = OpenSSL.makeTime(request.notAfter) else { throw failure("encode notAfter") }
        defer { ASN1_TIME_free(notAfter) }
        guard X509_set1_notBefore(x509, notBefore) == 1, X509_set1_notAfter(x509, notAfter) == 1 else {
            throw failure("set the validity")
        }
        guard X509_set_pubkey(x509, key.pointer) == 1 else { throw failure("set the public key") }

        // Extensions as RFC 5280 §4.2 expects of a CA and of a signing leaf;
        // `openssl smime -verify` rejects a chain whose CAs lack
        // basicConstraints CA:TRUE.
        var extensions: [(Int32, String)] = []
        switch request.kind {
        case .authority(let pathLength):
            extensions.append((NID_basic_constraints, "critical,CA:TRUE" + (pathLength.map { ",pathlen:\($0)" } ?? "")))
            extensions.append((NID_key_usage, "critical,keyCertSign,cRLSign"))
        case .signer:
            extensions.append((NID_basic_constraints, "critical,CA:FALSE"))
            extensions.append((NID_key_usage, "critical,digitalSignature"))
        }
        extensions.append((NID_subject_key_identifier, "hash"))
        extensions.append((NID_authority_key_identifier, "keyid:always"))

        var context = X509V3_CTX()
        // For a self-signed certificate the issuer is the certificate itself,
        // so its authorityKeyIdentifier equals its subjectKeyIdentifier.
        let issuerPointer = issuer?.certificate.pointer ?? x509
        X509V3_set_ctx(&context, issuerPointer, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let extensionPointer = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw failure("make the extension \(value)")
            }
            defer { X509_EXTENSION_free(extensionPointer) }
            guard X509_add_ext(x509, extensionPointer, -1) == 1 else { throw failure("add the extension \(value)") }
        }

        let signingKey = issuer?.key ?? key
        guard let sha256 = EVP_MD_fetch(nil, "SHA256", nil) else { throw failure("load SHA-256") }
        defer { EVP_MD_free(sha256) }
        guard X509_sign(x509, signingKey.pointer, sha256) > 0 else { throw failure("sign the certificate") }
        return IssuedCredential(certificate: certificate, key: key)
    }

    private static func generateRSAKey() throws(Failure) -> PrivateKey {
        // EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen, which
        // Swift cannot call; this is its expansion.
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw Failure(operation: "prepare RSA key generation", reason: OpenSSL.drainErrors())
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1,
            EVP_PKEY_generate(context, &key) == 1,
            let key
        else { throw Failure(operation: "generate an RSA key", reason: OpenSSL.drainErrors()) }
        return PrivateKey(taking: key)
    }

    /// A random, positive 127-bit serial: unique without keeping state
    /// (RFC 5280 §4.1.2.2 allows up to 20 octets).
    private static func setRandomSerialNumber(_ x509: OpaquePointer) throws(Failure) {
        var random = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&random, Int32(random.count)) == 1 else {
            throw Failure(operation: "make a serial number", reason: OpenSSL.drainErrors())
        }
        random[0] &= 0x7F
        guard let number = BN_bin2bn(random, Int32(random.count), nil) else {
            throw Failure(operation: "make a serial number", reason: OpenSSL.drainErrors())
        }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else {
            throw Failure(operation: "make a serial number", reason: OpenSSL.drainErrors())
        }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(x509, serial) == 1 else {
            throw Failure(operation: "set the serial number", reason: OpenSSL.drainErrors())
        }
    }
}

extension IssuedCredential {
    /// Parses a certificate and key PEM pair written by `pemFiles`.
    init?(certificatePEM: [UInt8], keyPEM: [UInt8]) {
        guard let certificate = X509Certificate.parseAll(certificatePEM).first,
            case .success(let key) = PrivateKey.parse(keyPEM, password: nil),
            certificate.matches(key)
        else { return nil }
        self.init(certificate: certificate, key: key)
    }

    var certificatePEM: [UInt8] { certificate.pemBytes }
    var keyPEM: [UInt8] { key.pemBytes }
    var summary: CertificateSummary { certificate.summary }

    /// Whether `issuer` issued and signed this credential's certificate.
    func isIssued(by issuer: IssuedCredential) -> Bool {
        issuer.certificate.issued(certificate)
    }
}
