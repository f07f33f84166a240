import COpenSSL
import Foundation

/// Whether a signer's certificate chains to a trusted root.
package enum ChainTrust: Sendable, Hashable {
    /// No trusted root was given, so the chain was not checked.
    case notChecked
    case trusted
    /// The reason OpenSSL gives, e.g. "certificate has expired".
    case untrusted(reason: String)
}

/// What a pass's `signature` says and whether it holds.
package struct SignatureInspection: Sendable, Hashable {
    /// Whether the signature and its message-digest attribute verify over
    /// the manifest bytes (the chain is judged separately, in `chainTrust`).
    package var verifiesManifest: Bool
    /// Why it does not verify, when it does not.
    package var verificationFailure: String?
    /// Whether the signature leaves the content out, as Apple requires.
    package var isDetached: Bool
    /// The signing-time signed attribute; nil when absent.
    package var signingTime: Date?
    /// The signer's digest algorithm, e.g. "SHA256".
    package var digestAlgorithm: String?
    /// The signer's certificate, when the signature embeds it.
    package var signer: CertificateSummary?
    /// Every certificate the signature embeds.
    package var embeddedCertificates: [CertificateSummary]
    /// Whether the certificate that issued the signer's (the WWDR
    /// intermediate, for a real pass) is embedded.
    package var embedsSignerIssuer: Bool
    package var chainTrust: ChainTrust
}

enum SignatureVerification {
    /// Examines the DER `signature` over `content`. Returns a failure reason
    /// only when the bytes are not a PKCS#7 SignedData at all.
    ///
    /// - Parameters:
    ///   - trustedRoots: PEM or DER certificates; when given, the signer's
    ///     chain (through the embedded certificates) is verified against them.
    ///   - date: the time the chain must be valid at.
    static func inspect(
        signature: [UInt8],
        content: [UInt8],
        trustedRoots: [UInt8]?,
        at date: Date
    ) -> Result<SignatureInspection, SignatureReadFailure> {
        OpenSSL.loadProviders()
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }

        guard !signature.isEmpty else { return .failure(SignatureReadFailure(reason: "the file is empty")) }
        let parsed = signature.withUnsafeBufferPointer { buffer -> UnsafeMutablePointer<PKCS7>? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let p7 = parsed else {
            return .failure(SignatureReadFailure(reason: "not DER PKCS#7: \(OpenSSL.drainErrors())"))
        }
        defer { PKCS7_free(p7) }
        // PKCS7_type_is_signed is a macro.
        guard OBJ_obj2nid(p7.pointee.type) == NID_pkcs7_signed, let signed = p7.pointee.d.sign else {
            return .failure(SignatureReadFailure(reason: "the PKCS#7 structure is not SignedData"))
        }

        // PKCS7_get_detached is a macro over PKCS7_ctrl.
        let isDetached = PKCS7_ctrl(p7, PKCS7_OP_GET_DETACHED_SIGNATURE, 0, nil) != 0

        let embedded = certificates(in: signed.pointee.cert)
        let signerCertificate = signerCertificate(of: p7)
        OpenSSL.clearErrors()

        // PKCS7_NOVERIFY: check the signature and the digest of the content
        // here; the chain is checked below against the caller's roots.
        // PKCS7_BINARY: the manifest's bytes as they are, as signed.
        let verified: Bool? = OpenSSL.withReadOnlyBIO(content) { bio in
            PKCS7_verify(p7, nil, nil, bio, nil, Int32(PKCS7_BINARY | PKCS7_NOVERIFY)) == 1
        }
        let verifiesManifest = verified == true
        let verificationFailure = verifiesManifest ? nil : OpenSSL.drainErrors()

        var signingTime: Date?
        var digestAlgorithm: String?
        if let infos = PKCS7_get_signer_info(p7), OPENSSL_sk_num(infos) > 0,
           let raw = OPENSSL_sk_value(infos, 0) {
            let info = raw.assumingMemoryBound(to: PKCS7_SIGNER_INFO.self)
            if let attribute = PKCS7_get_signed_attribute(info, NID_pkcs9_signingTime) {
                let type = attribute.pointee.type
                if type == V_ASN1_UTCTIME || type == V_ASN1_GENERALIZEDTIME {
                    signingTime = OpenSSL.date(from: attribute.pointee.value.utctime)
                }
            }
            var digest: UnsafeMutablePointer<X509_ALGOR>?
            PKCS7_SIGNER_INFO_get0_algs(info, nil, &digest, nil)
            if let digest {
                var object: OpaquePointer?
                X509_ALGOR_get0(&object, nil, nil, digest)
                if let object, let name = OBJ_nid2sn(OBJ_obj2nid(object)) {
                    digestAlgorithm = String(cString: name)
                }
            }
        }

        let issuerEmbedded = signerCertificate.map { signer in
            embedded.contains { $0.issued(signer) && X509_cmp($0.pointer, signer.pointer) != 0 }
        } ?? false

        var chainTrust = ChainTrust.notChecked
        if let trustedRoots {
            let roots = X509Certificate.parseAll(trustedRoots)
            if roots.isEmpty {
                chainTrust = .untrusted(reason: "the trusted root file holds no certificate")
            } else if let signerCertificate {
                chainTrust = verifyChain(signerCertificate, untrusted: signed.pointee.cert, roots: roots, at: date)
            } else {
                chainTrust = .untrusted(reason: "the signer certificate is not embedded")
            }
        }

        return .success(SignatureInspection(
            verifiesManifest: verifiesManifest,
            verificationFailure: verificationFailure,
            isDetached: isDetached,
            signingTime: signingTime,
            digestAlgorithm: digestAlgorithm,
            signer: signerCertificate?.summary,
            embeddedCertificates: embedded.map(\.summary),
            embedsSignerIssuer: issuerEmbedded,
            chainTrust: chainTrust
        ))
    }

    struct SignatureReadFailure: Error {
        var reason: String
    }

    /// Owned copies of the certificates in a `STACK_OF(X509)`.
    private static func certificates(in stack: OpaquePointer?) -> [X509Certificate] {
        guard let stack else { return [] }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            guard let raw = OPENSSL_sk_value(stack, index) else { return nil }
            let x509 = OpaquePointer(raw)
            X509_up_ref(x509)
            return X509Certificate(taking: x509)
        }
    }

    private static func signerCertificate(of p7: UnsafeMutablePointer<PKCS7>) -> X509Certificate? {
        guard let signers = PKCS7_get0_signers(p7, nil, 0) else { return nil }
        // The stack is ours, its certificates are not (sk_X509_free macro).
        defer { OPENSSL_sk_free(signers) }
        return certificates(in: signers).first
    }

    private static func verifyChain(
        _ signer: X509Certificate,
        untrusted: OpaquePointer?,
        roots: [X509Certificate],
        at date: Date
    ) -> ChainTrust {
        guard let store = X509_STORE_new() else { return .untrusted(reason: OpenSSL.drainErrors()) }
        defer { X509_STORE_free(store) }
        for root in roots { X509_STORE_add_cert(store, root.pointer) }
        guard let context = X509_STORE_CTX_new() else { return .untrusted(reason: OpenSSL.drainErrors()) }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, signer.pointer, untrusted) == 1 else {
            return .untrusted(reason: OpenSSL.drainErrors())
        }
        // Wallet certificates carry no S/MIME or TLS purpose; like
        // `openssl smime -verify -purpose any`, accept any purpose.
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
        X509_STORE_CTX_set_time(context, 0, time_t(date.timeIntervalSince1970.rounded(.down)))
        if X509_verify_cert(context) == 1 { return .trusted }
        let code = X509_STORE_CTX_get_error(context)
        return .untrusted(reason: String(cString: X509_verify_cert_error_string(Int(code))))
    }
}
