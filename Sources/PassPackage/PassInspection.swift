package import Foundation
package import PassModel

/// What is wrong with a `.pkpass`. Every case would keep the pass from
/// installing or updating on a device, except `untrustedChain`, which is
/// expected for development passes.
package enum PassDefect: Sendable, Hashable, CustomStringConvertible {
    case unreadableArchive(String)
    /// A file that is neither at the root nor directly in a `.lproj` folder
    /// (e.g. a pass zipped with its folder), which Wallet does not see.
    case misplacedFile(String)
    /// `pass.json`, `manifest.json` or `signature` is absent.
    case missingFile(String)
    case unreadableManifest(String)
    /// A file the manifest does not list.
    case unlistedFile(String)
    /// A file the manifest lists that is not in the archive.
    case missingListedFile(String)
    case hashMismatch(file: String, manifest: String, actual: String)
    case unreadablePassJSON(String)
    case unreadableSignature(String)
    case signatureDoesNotVerify(String)
    case signatureNotDetached
    case missingSigningTime
    case missingSignerCertificate
    /// The certificate that issued the signer's (WWDR) is not embedded:
    /// which intermediates are (their names), and which one issued the signer.
    case missingIntermediate(embedded: [String], signerIssuer: String, signerIssuerShortName: String)
    case certificateNotValid(notBefore: Date, notAfter: Date, checkedAt: Date)
    case untrustedChain(String)
    /// `passTypeIdentifier` or `teamIdentifier` in pass.json differs from
    /// the certificate's UID or OU.
    case identifierMismatch(key: String, pass: String, certificate: String?)

    package var description: String {
        switch self {
        case .unreadableArchive(let reason):
            return "not a readable pass archive: \(reason)"
        case .misplacedFile(let name):
            return "\(name): Wallet reads files only at the root of the archive or in a "
                + "<language>.lproj folder; zip the pass's files, not its folder"
        case .missingFile(let name):
            return "\(name) is missing"
        case .unreadableManifest(let reason):
            return "manifest.json cannot be read: \(reason)"
        case .unlistedFile(let name):
            return "\(name) is not listed in manifest.json"
        case .missingListedFile(let name):
            return "manifest.json lists \(name), which is not in the pass"
        case .hashMismatch(let file, let manifest, let actual):
            let algorithm = manifest.count == 64 ? "SHA-256" : "SHA-1"
            return
                "\(file) was changed after signing: manifest.json says \(algorithm) \(manifest), the file has \(actual)"
        case .unreadablePassJSON(let reason):
            return "\(reason.hasPrefix("order.json") ? "" : "pass.json cannot be read: ")\(reason)"
        case .unreadableSignature(let reason):
            return "signature cannot be read: \(reason)"
        case .signatureDoesNotVerify(let reason):
            return "signature does not verify over manifest.json: \(reason)"
        case .signatureNotDetached:
            return "signature embeds its content; it must be detached"
        case .missingSigningTime:
            return
                "signature has no signing-time attribute; iOS rejects it with \"Signature must contain a signing date\""
        case .missingSignerCertificate:
            return "signature does not embed the signer's certificate"
        case .missingIntermediate(let embedded, let signerIssuer, let shortName):
            let present = embedded.isEmpty ? "no intermediate certificate" : embedded.joined(separator: " and ")
            return "the signer's certificate was issued by \(signerIssuer), but the signature embeds \(present); "
                + "Wallet needs the issuing intermediate in the signature: re-sign "
                + "the pass with \(shortName) as the intermediate"
                + (shortName.hasPrefix("Apple WWDR") ? " (from https://www.apple.com/certificateauthority/)" : "")
        case .certificateNotValid(let notBefore, let notAfter, let checkedAt):
            return "the signing certificate is valid from \(Self.format(notBefore)) to \(Self.format(notAfter)), "
                + "not at \(Self.format(checkedAt)), the time checked; renew it (or "
                + "check an old pass with --valid-at signing)"
        case .untrustedChain(let reason):
            return "the signing certificate does not chain to the trusted root: \(reason)"
        case .identifierMismatch(let key, let pass, let certificate):
            let file = key == "orderTypeIdentifier" ? "order.json" : "pass.json"
            return "\(file) \(key) is \"\(pass)\" but the signing certificate is for "
                + "\"\(certificate ?? "(none)")\"; the device will reject it"
        }
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}

/// Everything `passforge inspect` reports about a `.pkpass`: its files, the
/// manifest check, the signature check and the certificate facts. Problems
/// are collected in `defects`; inspection never stops at the first.
package struct PassInspection: Sendable {
    package typealias Kind = WalletItemKind

    package struct Entry: Sendable, Hashable {
        package var name: String
        package var size: Int
        /// The file's hash by the manifest's algorithm (SHA-1 for a pass, SHA-256 for an order).
        package var digest: String
    }

    package var kind: Kind

    /// The archive's files, in archive order.
    package var entries: [Entry]
    /// The archive's files by name (bounded by the read limits).
    package var files: [String: [UInt8]]
    package var manifest: Manifest?
    package var signature: SignatureInspection?
    package var defects: [PassDefect]
    /// pass.json as read by PassModel's strict parser (the build's); when
    /// that refuses it (a defect), as far as a lenient reader gets, so that
    /// the other checks still run on what can be read. Nil when unreadable.
    package var passJSON: JSONValue?

    package var isValid: Bool { defects.isEmpty }

    /// Inspects `pkpass`.
    ///
    /// - Parameters:
    ///   - trustedRoots: PEM or DER root certificates; when given, the signer's
    ///     chain is verified against them (Apple Inc.'s "Apple Root CA",
    ///     which WWDR G1 and G4 chain to, or the development root). Without
    ///     it the chain is not judged.
    ///   - limits: bounds on unpacking.
    ///   - date: the time certificates must be valid at.
    package init(pkpass: [UInt8], trustedRoots: [UInt8]? = nil, limits: ZipReadLimits = .pass, at date: Date = Date()) {
        self.init(pkpass: pkpass, trustedRoots: trustedRoots, limits: limits, validAt: .date(date))
    }

    /// Inspects `pkpass`, judging certificates at `moment` (the signature's
    /// signing time, or a date).
    package init(
        pkpass: [UInt8], trustedRoots: [UInt8]? = nil, limits: ZipReadLimits = .pass, validAt moment: ValidityMoment
    ) {
        self.init(kind: .pass, archive: pkpass, trustedRoots: trustedRoots, limits: limits, validAt: moment)
    }

    /// Inspects an `.order`: its SHA-256 manifest, its signature, and its
    /// orderTypeIdentifier against the Order Type ID certificate.
    package init(
        order: [UInt8], trustedRoots: [UInt8]? = nil, limits: ZipReadLimits = .pass, validAt moment: ValidityMoment
    ) {
        self.init(kind: .order, archive: order, trustedRoots: trustedRoots, limits: limits, validAt: moment)
    }

    private init(
        kind: Kind, archive: [UInt8], trustedRoots: [UInt8]?, limits: ZipReadLimits, validAt moment: ValidityMoment
    ) {
        self.kind = kind
        entries = []
        files = [:]
        manifest = nil
        signature = nil
        defects = []

        let zipEntries: [ZipEntry]
        do {
            zipEntries = try ZipArchive.read(archive, limits: limits)
        } catch {
            defects.append(.unreadableArchive(error.description))
            return
        }
        for entry in zipEntries {
            entries.append(Entry(name: entry.name, size: entry.bytes.count, digest: kind.digest.hex(entry.bytes)))
            files[entry.name] = entry.bytes
            if PassPackager.layoutProblem(entry.name) != nil { defects.append(.misplacedFile(entry.name)) }
        }
        for required in [kind.rootFile, Manifest.fileName, Manifest.signatureFileName] where files[required] == nil {
            defects.append(.missingFile(required))
        }

        readPassJSON()
        checkManifest()
        checkSignature(trustedRoots: trustedRoots, at: moment)
    }

    /// pass.json through the same strict parser the build uses (RFC 8259,
    /// UTF-8), whatever the signature's state: Apple's validator calls a
    /// trailing comma invalid JSON.
    private mutating func readPassJSON() {
        guard let bytes = files[kind.rootFile] else { return }
        do {
            passJSON = try JSONValue(parsing: bytes)
            return
        } catch {
            var reason = error.description
            if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
                reason =
                    "it is UTF-16 (it starts with a byte-order mark); JSON passes "
                    + "are UTF-8 (RFC 8259 §8.1): save it as UTF-8"
            } else if bytes.count >= 2, bytes[0] == 0 || bytes[1] == 0 {
                reason = "it is UTF-16 or UTF-32; JSON passes are UTF-8 (RFC 8259 §8.1): save it as UTF-8"
            }
            defects.append(.unreadablePassJSON(kind == .pass ? reason : "order.json cannot be read: \(reason)"))
        }
        // What a lenient reader makes of it, so that the other checks are not lost.
        passJSON = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    private mutating func checkManifest() {
        guard let manifestBytes = files[Manifest.fileName] else { return }
        let manifest: Manifest
        do {
            manifest = try Manifest(jsonBytes: manifestBytes)
        } catch {
            defects.append(.unreadableManifest(error.description))
            return
        }
        self.manifest = manifest
        let present = entries.map(\.name).filter { !Manifest.isExcluded($0) }
        for name in present.sorted() {
            let actual = kind.digest.hex(files[name]!)
            guard let listed = manifest.hashes[name] else {
                defects.append(.unlistedFile(name))
                continue
            }
            if listed.lowercased() != actual {
                defects.append(.hashMismatch(file: name, manifest: listed, actual: actual))
            }
        }
        let presentSet = Set(present)
        for name in manifest.hashes.keys.sorted() where !presentSet.contains(name) {
            defects.append(.missingListedFile(name))
        }
    }

    private mutating func checkSignature(trustedRoots: [UInt8]?, at moment: ValidityMoment) {
        guard let signatureBytes = files[Manifest.signatureFileName],
            let manifestBytes = files[Manifest.fileName]
        else { return }
        let inspection: SignatureInspection
        switch SignatureVerification.inspect(
            signature: signatureBytes, content: manifestBytes, trustedRoots: trustedRoots, at: moment
        ) {
        case .failure(let failure):
            defects.append(.unreadableSignature(failure.reason))
            return
        case .success(let result):
            inspection = result
        }
        signature = inspection

        if !inspection.verifiesManifest {
            defects.append(.signatureDoesNotVerify(inspection.verificationFailure ?? "unknown reason"))
        }
        if !inspection.isDetached { defects.append(.signatureNotDetached) }
        if inspection.signingTime == nil { defects.append(.missingSigningTime) }
        guard let signer = inspection.signer else {
            defects.append(.missingSignerCertificate)
            return
        }
        let date = inspection.checkedAt
        if !inspection.embedsSignerIssuer {
            let embedded = inspection.embeddedCertificates.filter { $0.derBytes != signer.derBytes }
            defects.append(
                .missingIntermediate(
                    embedded: embedded.map(AppleIntermediate.name(of:)),
                    signerIssuer: AppleIntermediate.name(ofIssuerOf: signer),
                    signerIssuerShortName: AppleIntermediate.shortName(subject: signer.issuer)))
        }
        if !signer.isValid(at: date) {
            defects.append(
                .certificateNotValid(notBefore: signer.notBefore, notAfter: signer.notAfter, checkedAt: date))
        }
        // One cause, one defect: an expired signer or a missing intermediate
        // also breaks the chain, and is reported above already.
        if case .untrusted(let reason) = inspection.chainTrust {
            let explained =
                inspection.chainFailure.map { failure in
                    (failure.isSignerValidityPeriod && !signer.isValid(at: date))
                        || (failure.isSignerIssuerMissing && !inspection.embedsSignerIssuer)
                } ?? false
            if !explained { defects.append(.untrustedChain(reason)) }
        }
        checkIdentifiers(against: signer)
    }

    /// A pass whose passTypeIdentifier or teamIdentifier does not match the
    /// certificate (its UID and OU) fails on device.
    private mutating func checkIdentifiers(against signer: CertificateSummary) {
        guard let pass = passJSON?.objectValue else { return }
        let typeKey = kind == .pass ? "passTypeIdentifier" : "orderTypeIdentifier"
        if let identifier = pass[typeKey]?.stringValue, identifier != signer.userID {
            defects.append(.identifierMismatch(key: typeKey, pass: identifier, certificate: signer.userID))
        }
        if let team = pass["teamIdentifier"]?.stringValue, team != signer.organizationalUnit {
            defects.append(
                .identifierMismatch(key: "teamIdentifier", pass: team, certificate: signer.organizationalUnit))
        }
    }
}
