import COpenSSL
import Foundation

/// An owned OpenSSL `X509*`.
///
/// `@unchecked Sendable`: the pointer is set once in `init` and freed once in
/// `deinit`; nothing in PassPackage mutates the certificate after parsing.
/// OpenSSL documents `X509` objects as safe for concurrent read-only use
/// (https://www.openssl.org/docs/man3.0/man7/openssl-threads.html); the one
/// lazily filled cache (extension flags) is guarded by the object's own lock,
/// and reference counts are atomic.
final class X509Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }

    /// Every certificate in `bytes`: all `CERTIFICATE` blocks of a PEM file,
    /// or the single certificate of a DER file. Empty when there are none.
    static func parseAll(_ bytes: [UInt8]) -> [X509Certificate] {
        defer { OpenSSL.clearErrors() }
        if bytes.looksLikePEM {
            let certificates: [X509Certificate]? = OpenSSL.withReadOnlyBIO(bytes) { bio in
                var found: [X509Certificate] = []
                // PEM_read_bio_X509 skips blocks of other types (keys, bag
                // attributes text) and returns NULL at the end of input.
                while let x509 = PEM_read_bio_X509(bio, nil, noPasswordCallback, nil) {
                    found.append(X509Certificate(taking: x509))
                }
                return found
            }
            return certificates ?? []
        }
        return parseDER(bytes).map { [$0] } ?? []
    }

    static func parseDER(_ bytes: [UInt8]) -> X509Certificate? {
        // d2i_* functions must not see a zero-length buffer's nil address.
        guard !bytes.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> X509Certificate? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else {
                OpenSSL.clearErrors()
                return nil
            }
            // Trailing bytes mean this was not (only) a certificate, e.g. a
            // PKCS#12 file whose first element happened to parse.
            guard let end = cursor, end - buffer.baseAddress! == buffer.count else {
                X509_free(x509)
                return nil
            }
            return X509Certificate(taking: x509)
        }
    }

    var derBytes: [UInt8] {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            count = Int(i2d_X509(pointer, &cursor))
        }
    }

    var pemBytes: [UInt8] {
        OpenSSL.collectingBIO { PEM_write_bio_X509($0, pointer) == 1 } ?? []
    }

    var summary: CertificateSummary {
        let subjectName = X509_get_subject_name(pointer)
        let issuerName = X509_get_issuer_name(pointer)
        return CertificateSummary(
            subject: Self.oneLine(subjectName),
            issuer: Self.oneLine(issuerName),
            commonName: Self.entry(NID_commonName, of: subjectName),
            userID: Self.entry(NID_userId, of: subjectName),
            organizationalUnit: Self.entry(NID_organizationalUnitName, of: subjectName),
            organization: Self.entry(NID_organizationName, of: subjectName),
            serialNumber: serialNumberHex,
            notBefore: OpenSSL.date(from: X509_get0_notBefore(pointer)) ?? .distantPast,
            notAfter: OpenSSL.date(from: X509_get0_notAfter(pointer)) ?? .distantPast,
            derBytes: derBytes,
            subjectKeyID: Self.hex(X509_get0_subject_key_id(pointer)),
            authorityKeyID: Self.hex(X509_get0_authority_key_id(pointer))
        )
    }

    /// An octet string as `5B:D9:FA:…`.
    private static func hex(_ octets: UnsafePointer<ASN1_OCTET_STRING>?) -> String? {
        guard let octets, let data = ASN1_STRING_get0_data(octets) else { return nil }
        let length = Int(ASN1_STRING_length(octets))
        return UnsafeBufferPointer(start: data, count: length).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// Whether `self` issued `subject`: names and key identifiers match
    /// (`X509_check_issued`) and `self`'s key verifies `subject`'s signature.
    func issued(_ subject: X509Certificate) -> Bool {
        defer { OpenSSL.clearErrors() }
        guard X509_check_issued(pointer, subject.pointer) == X509_V_OK,
            let issuerKey = X509_get0_pubkey(pointer)
        else { return false }
        return X509_verify(subject.pointer, issuerKey) == 1
    }

    /// Whether `key` is the private half of this certificate's public key.
    func matches(_ key: PrivateKey) -> Bool {
        defer { OpenSSL.clearErrors() }
        return X509_check_private_key(pointer, key.pointer) == 1
    }

    private var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(pointer),
            let number = ASN1_INTEGER_to_BN(serial, nil)
        else { return "" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { CRYPTO_free(hex, nil, 0) }
        return String(cString: hex)
    }

    /// `UID=…, CN=…, OU=…` in certificate order, UTF-8, RFC 2253 escaping.
    private static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        // XN_FLAG_SEP_CPLUS_SPC: ", " between RDNs; XN_FLAG_FN_SN: short
        // names ("UID", "CN"); RFC 2253 escaping but without escaping UTF-8
        // bytes, so non-ASCII names stay readable.
        // (ASN1_STRFLGS_RFC2253 is a compound macro Swift cannot import, so
        // its parts are spelled out, minus ASN1_STRFLGS_ESC_MSB.)
        let stringFlags =
            UInt(ASN1_STRFLGS_ESC_2253) | UInt(ASN1_STRFLGS_ESC_CTRL)
            | UInt(ASN1_STRFLGS_UTF8_CONVERT) | UInt(ASN1_STRFLGS_DUMP_UNKNOWN) | UInt(ASN1_STRFLGS_DUMP_DER)
        let flags = UInt(XN_FLAG_SEP_CPLUS_SPC) | UInt(XN_FLAG_FN_SN) | stringFlags
        let bytes = OpenSSL.collectingBIO { bio in
            X509_NAME_print_ex(bio, name, 0, flags) >= 0
        }
        return bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    private static func entry(_ nid: Int32, of name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index) else { return nil }
        return OpenSSL.string(from: X509_NAME_ENTRY_get_data(entry))
    }
}

/// An owned OpenSSL `EVP_PKEY*` holding a private key.
///
/// `@unchecked Sendable`: immutable after `init`, freed once in `deinit`.
/// OpenSSL allows one `EVP_PKEY` to sign from several threads at once
/// (https://www.openssl.org/docs/man3.0/man7/openssl-threads.html); for RSA it
/// then serializes the blinding step on a lock, which is why each signing
/// worker gets its own copy (`duplicate()`).
final class PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    enum ParseFailure: Error {
        case passwordRequired
        case wrongPassword
        case notAKey(reason: String)
    }

    /// Parses a PEM private key (PKCS#8, encrypted PKCS#8, or a traditional
    /// "BEGIN RSA/EC PRIVATE KEY" block, possibly with `Proc-Type: 4,ENCRYPTED`)
    /// or a DER one (PKCS#8, encrypted PKCS#8, traditional).
    static func parse(_ bytes: [UInt8], password: String?) -> Result<PrivateKey, ParseFailure> {
        guard !bytes.isEmpty else { return .failure(.notAKey(reason: "the file is empty")) }
        OpenSSL.loadProviders()
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }
        if bytes.looksLikePEM {
            // Both PEM encryption forms announce themselves in the text.
            let encrypted =
                bytes.contains(ascii: "-----BEGIN ENCRYPTED PRIVATE KEY-----")
                || bytes.contains(ascii: "Proc-Type: 4,ENCRYPTED")
            if encrypted && password == nil { return .failure(.passwordRequired) }
            let key: OpaquePointer?? = OpenSSL.withReadOnlyBIO(bytes) { bio in
                OpenSSL.withPassword(password) { cPassword in
                    // With a NULL callback, OpenSSL's default callback reads
                    // the password from the userdata argument as a C string
                    // (https://www.openssl.org/docs/man3.0/man3/PEM_read_bio_PrivateKey.html).
                    cPassword == nil
                        ? PEM_read_bio_PrivateKey(bio, nil, noPasswordCallback, nil)
                        : PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(cPassword))
                }
            }
            if let key = key ?? nil { return .success(PrivateKey(taking: key)) }
            if encrypted { return .failure(.wrongPassword) }
            return .failure(.notAKey(reason: OpenSSL.drainErrors()))
        }
        // DER: an encrypted PKCS#8 key is an X509_SIG (EncryptedPrivateKeyInfo).
        if isEncryptedPKCS8(bytes) {
            guard password != nil else { return .failure(.passwordRequired) }
            let key: OpaquePointer?? = OpenSSL.withReadOnlyBIO(bytes) { bio in
                OpenSSL.withPassword(password) { cPassword in
                    d2i_PKCS8PrivateKey_bio(bio, nil, nil, UnsafeMutableRawPointer(cPassword))
                }
            }
            if let key = key ?? nil { return .success(PrivateKey(taking: key)) }
            return .failure(.wrongPassword)
        }
        let key = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        if let key { return .success(PrivateKey(taking: key)) }
        return .failure(.notAKey(reason: OpenSSL.drainErrors()))
    }

    private static func isEncryptedPKCS8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let sig = d2i_X509_SIG(nil, &cursor, buffer.count) else { return false }
            X509_SIG_free(sig)
            return true
        }
    }

    /// An independent copy of the key (separate RSA blinding state and
    /// caches), for one signing worker.
    func duplicate() -> PrivateKey? {
        guard let copy = EVP_PKEY_dup(pointer) else {
            OpenSSL.clearErrors()
            return nil
        }
        return PrivateKey(taking: copy)
    }

    /// Unencrypted PKCS#8 PEM.
    var pemBytes: [UInt8] {
        OpenSSL.collectingBIO { bio in
            PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1
        } ?? []
    }
}
