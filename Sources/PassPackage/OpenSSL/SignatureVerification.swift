import COpenSSL
package import Foundation

/// Whether a signer's certificate chains to a trusted root.
package enum ChainTrust: Sendable, Hashable {
    /// No trusted root was given, so the chain was not checked.
    case notChecked
    case trusted
    /// The reason OpenSSL gives, e.g. "certificate has expired".
    case untrusted(reason: String)
}

/// Why the chain did not verify, as OpenSSL's verifier reports it, so that
/// one cause is reported once: an expired signer, or a missing intermediate,
/// is already a defect of its own.
package struct ChainFailure: Sendable, Hashable {
    /// OpenSSL's `X509_V_ERR_*` code.
    package var code: Int32
    /// 0 for the signer's certificate, 1 for its issuer, and so on.
    package var depth: Int32

    /// The signer's own certificate is outside its validity period.
    package var isSignerValidityPeriod: Bool {
        depth == 0 && (code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID)
    }

    /// No certificate that issued the signer's was found.
    package var isSignerIssuerMissing: Bool {
        depth == 0
            && (code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT)
    }
}

/// The moment certificates are judged at.
package enum ValidityMoment: Sendable, Hashable {
    /// The signature's signingTime attribute (or now, when it has none):
    /// for an old pass, whether it was sound when it was signed.
    case signingTime
    case date(Date)

    package static var now: ValidityMoment { .date(Date()) }
}

/// What a pass's `signature` (a CMS SignedData, RFC 5652) says and whether it holds.
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
    /// Why the chain did not verify, when it was checked and did not.
    package var chainFailure: ChainFailure?
    /// The time the certificates were judged at.
    package var checkedAt: Date
}

enum SignatureVerification {
    /// Examines the DER `signature` over `content`. Returns a failure reason
    /// only when the bytes are not a CMS SignedData at all.
    ///
    /// Read with OpenSSL's CMS API rather than PKCS#7's: CMS reads every
    /// SignedData, including a SignerInfo that names its signer by subject
    /// key identifier (version 3, RFC 5652 §5.3; `openssl cms -sign -keyid`),
    /// which PKCS#7 (RFC 2315) cannot express.
    ///
    /// - Parameters:
    ///   - trustedRoots: PEM or DER certificates; when given, the signer's
    ///     chain (through the embedded certificates) is verified against them.
    ///   - moment: the time the certificates must be valid at.
    static func inspect(
        signature: [UInt8],
        content: [UInt8],
        trustedRoots: [UInt8]?,
        at moment: ValidityMoment
    ) -> Result<SignatureInspection, SignatureReadFailure> {
        OpenSSL.loadProviders()
        OpenSSL.clearErrors()
        defer { OpenSSL.clearErrors() }

        let cms: OpaquePointer
        switch parseSignedData(signature) {
        case .success(let parsed): cms = parsed
        case .failure(let failure): return .failure(failure)
        }
        defer { CMS_ContentInfo_free(cms) }

        let isDetached = CMS_is_detached(cms) == 1
        let embedded = ownedCertificates(CMS_get1_certs(cms))
        // Finds each SignerInfo's certificate among the embedded ones, by
        // issuer and serial number or by subject key identifier.
        _ = CMS_set1_signers_certs(cms, nil, 0)
        OpenSSL.clearErrors()
        let signer = firstSigner(of: cms)
        OpenSSL.clearErrors()

        let (verifiesManifest, verificationFailure) = verifyManifest(cms, content: content, isDetached: isDetached)
        let issuerEmbedded =
            signer.certificate.map { signer in
                embedded.contains { $0.issued(signer) && X509_cmp($0.pointer, signer.pointer) != 0 }
            } ?? false

        let date: Date
        switch moment {
        case .date(let given): date = given
        case .signingTime: date = signer.signingTime ?? Date()
        }
        let (chainTrust, chainFailure) = judgeChain(
            of: signer.certificate, embedded: embedded,
            trustedRoots: trustedRoots, at: date)

        return .success(
            SignatureInspection(
                verifiesManifest: verifiesManifest,
                verificationFailure: verificationFailure,
                isDetached: isDetached,
                signingTime: signer.signingTime,
                digestAlgorithm: signer.digestAlgorithm,
                signer: signer.certificate?.summary,
                embeddedCertificates: embedded.map(\.summary),
                embedsSignerIssuer: issuerEmbedded,
                chainTrust: chainTrust,
                chainFailure: chainFailure,
                checkedAt: date
            ))
    }

    /// The DER bytes as a CMS SignedData, owned by the caller (`CMS_ContentInfo_free`).
    private static func parseSignedData(_ signature: [UInt8]) -> Result<OpaquePointer, SignatureReadFailure> {
        guard !signature.isEmpty else { return .failure(SignatureReadFailure(reason: "the file is empty")) }
        let parsed = signature.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_CMS_ContentInfo(nil, &cursor, buffer.count)
        }
        guard let cms = parsed else {
            return .failure(SignatureReadFailure(reason: "not a DER CMS/PKCS#7 structure: \(OpenSSL.drainErrors())"))
        }
        guard OBJ_obj2nid(CMS_get0_type(cms)) == NID_pkcs7_signed else {
            CMS_ContentInfo_free(cms)
            return .failure(SignatureReadFailure(reason: "the CMS structure is not SignedData"))
        }
        return .success(cms)
    }

    /// What the first SignerInfo says: its certificate (when embedded), signing time and digest algorithm.
    private struct SignerDetails {
        var certificate: X509Certificate?
        var signingTime: Date?
        var digestAlgorithm: String?
    }

    private static func firstSigner(of cms: OpaquePointer) -> SignerDetails {
        var details = SignerDetails()
        guard let infos = CMS_get0_SignerInfos(cms), OPENSSL_sk_num(infos) > 0,
            let raw = OPENSSL_sk_value(infos, 0)
        else { return details }
        let info = OpaquePointer(raw)
        var signer: OpaquePointer?
        var digest: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(info, nil, &signer, &digest, nil)
        if let signer {
            X509_up_ref(signer)
            details.certificate = X509Certificate(taking: signer)
        }
        if let digest {
            var object: OpaquePointer?
            X509_ALGOR_get0(&object, nil, nil, digest)
            if let object, let name = OBJ_nid2sn(OBJ_obj2nid(object)) {
                details.digestAlgorithm = String(cString: name)
            }
        }
        let index = CMS_signed_get_attr_by_NID(info, NID_pkcs9_signingTime, -1)
        if index >= 0, let attribute = CMS_signed_get_attr(info, index),
            let value = X509_ATTRIBUTE_get0_type(attribute, 0)
        {
            let type = value.pointee.type
            if type == V_ASN1_UTCTIME || type == V_ASN1_GENERALIZEDTIME {
                details.signingTime = OpenSSL.date(from: value.pointee.value.utctime)
            }
        }
        return details
    }

    /// Whether the signature and its digest verify over the manifest's bytes, and why not when they do not.
    private static func verifyManifest(
        _ cms: OpaquePointer, content: [UInt8], isDetached: Bool
    ) -> (verifies: Bool, failure: String?) {
        // CMS_NO_SIGNER_CERT_VERIFY: check the signature and the digest of
        // the content here; the chain is checked apart against the caller's
        // roots. CMS_BINARY: the manifest's bytes as they are, as signed.
        let verified: Bool? = OpenSSL.withReadOnlyBIO(content) { bio in
            CMS_verify(cms, nil, nil, isDetached ? bio : nil, nil, UInt32(CMS_BINARY | CMS_NO_SIGNER_CERT_VERIFY)) == 1
        }
        // An attached signature verifies over the content it carries: that
        // must be the manifest too (it is a defect anyway: not detached).
        let carriesManifest = isDetached || embeddedContent(of: cms) == content
        let verifies = verified == true && carriesManifest
        let failure =
            verifies
            ? nil
            : carriesManifest ? OpenSSL.drainErrors() : "the signature carries other content than manifest.json"
        return (verifies, failure)
    }

    /// The signer's chain judged against `trustedRoots` at `date`; not checked without roots.
    private static func judgeChain(
        of signer: X509Certificate?, embedded: [X509Certificate], trustedRoots: [UInt8]?, at date: Date
    ) -> (ChainTrust, ChainFailure?) {
        guard let trustedRoots else { return (.notChecked, nil) }
        let roots = X509Certificate.parseAll(trustedRoots)
        if roots.isEmpty {
            return (.untrusted(reason: "the trusted root file holds no certificate"), nil)
        } else if let signer {
            return verifyChain(signer, untrusted: embedded, roots: roots, at: date)
        } else {
            return (.untrusted(reason: "the signer certificate is not embedded"), nil)
        }
    }

    /// The content an attached SignedData carries (nil when detached).
    private static func embeddedContent(of cms: OpaquePointer) -> [UInt8]? {
        guard let slot = CMS_get0_content(cms), let octets = slot.pointee,
            let data = ASN1_STRING_get0_data(octets)
        else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(octets))))
    }

    struct SignatureReadFailure: Error {
        var reason: String
    }

    /// Takes the certificates of a `STACK_OF(X509)` whose references are
    /// the caller's (a `get1` result) and frees the stack itself.
    private static func ownedCertificates(_ stack: OpaquePointer?) -> [X509Certificate] {
        guard let stack else { return [] }
        defer { OPENSSL_sk_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            OPENSSL_sk_value(stack, index).map { X509Certificate(taking: OpaquePointer($0)) }
        }
    }

    private static func verifyChain(
        _ signer: X509Certificate,
        untrusted: [X509Certificate],
        roots: [X509Certificate],
        at date: Date
    ) -> (ChainTrust, ChainFailure?) {
        guard let store = X509_STORE_new() else { return (.untrusted(reason: OpenSSL.drainErrors()), nil) }
        defer { X509_STORE_free(store) }
        for root in roots { X509_STORE_add_cert(store, root.pointer) }
        guard let chain = OPENSSL_sk_new_null() else { return (.untrusted(reason: OpenSSL.drainErrors()), nil) }
        // The stack borrows the certificates (sk_X509_free, not pop_free).
        defer { OPENSSL_sk_free(chain) }
        for certificate in untrusted { OPENSSL_sk_push(chain, UnsafeRawPointer(certificate.pointer)) }
        guard let context = X509_STORE_CTX_new() else { return (.untrusted(reason: OpenSSL.drainErrors()), nil) }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, signer.pointer, chain) == 1 else {
            return (.untrusted(reason: OpenSSL.drainErrors()), nil)
        }
        // Wallet certificates carry no S/MIME or TLS purpose; like
        // `openssl smime -verify -purpose any`, accept any purpose.
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
        X509_STORE_CTX_set_time(context, 0, OpenSSL.seconds(date) ?? 0)
        if X509_verify_cert(context) == 1 { return (.trusted, nil) }
        let code = X509_STORE_CTX_get_error(context)
        let failure = ChainFailure(code: code, depth: X509_STORE_CTX_get_error_depth(context))
        var reason = String(cString: X509_verify_cert_error_string(Int(code)))
        // Which certificate: an intermediate that expired is another fact than an expired signer.
        if failure.depth > 0, let current = X509_STORE_CTX_get_current_cert(context) {
            X509_up_ref(current)
            reason += " (\(AppleIntermediate.shortName(subject: X509Certificate(taking: current).summary.subject)))"
        }
        return (.untrusted(reason: reason), failure)
    }
}
