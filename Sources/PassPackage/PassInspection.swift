import Foundation

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
    /// The certificate that issued the signer's (WWDR) is not embedded.
    case missingIntermediate
    case certificateNotValid(notBefore: Date, notAfter: Date)
    case untrustedChain(String)
    /// `passTypeIdentifier` or `teamIdentifier` in pass.json differs from
    /// the certificate's UID or OU.
    case identifierMismatch(key: String, pass: String, certificate: String?)

    package var description: String {
        switch self {
        case let .unreadableArchive(reason):
            return "not a readable pass archive: \(reason)"
        case let .misplacedFile(name):
            return "\(name): Wallet reads files only at the root of the archive or in a <language>.lproj folder; zip the pass's files, not its folder"
        case let .missingFile(name):
            return "\(name) is missing"
        case let .unreadableManifest(reason):
            return "manifest.json cannot be read: \(reason)"
        case let .unlistedFile(name):
            return "\(name) is not listed in manifest.json"
        case let .missingListedFile(name):
            return "manifest.json lists \(name), which is not in the pass"
        case let .hashMismatch(file, manifest, actual):
            return "\(file) was changed after signing: manifest.json says SHA-1 \(manifest), the file has \(actual)"
        case let .unreadablePassJSON(reason):
            return "pass.json cannot be read: \(reason)"
        case let .unreadableSignature(reason):
            return "signature cannot be read: \(reason)"
        case let .signatureDoesNotVerify(reason):
            return "signature does not verify over manifest.json: \(reason)"
        case .signatureNotDetached:
            return "signature embeds its content; it must be detached"
        case .missingSigningTime:
            return "signature has no signing-time attribute; iOS rejects it with \"Signature must contain a signing date\""
        case .missingSignerCertificate:
            return "signature does not embed the signer's certificate"
        case .missingIntermediate:
            return "signature does not embed the intermediate (Apple WWDR) certificate that issued the signer's"
        case let .certificateNotValid(notBefore, notAfter):
            return "the signing certificate is valid from \(Self.format(notBefore)) to \(Self.format(notAfter)), not now; renew it"
        case let .untrustedChain(reason):
            return "the signing certificate does not chain to the trusted root: \(reason)"
        case let .identifierMismatch(key, pass, certificate):
            return "pass.json \(key) is \"\(pass)\" but the signing certificate is for \"\(certificate ?? "(none)")\"; the device will reject the pass"
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
    package struct Entry: Sendable, Hashable {
        package var name: String
        package var size: Int
        package var sha1: String
    }

    /// The archive's files, in archive order.
    package var entries: [Entry]
    /// The archive's files by name (bounded by the read limits).
    package var files: [String: [UInt8]]
    package var manifest: Manifest?
    package var signature: SignatureInspection?
    package var defects: [PassDefect]

    package var isValid: Bool { defects.isEmpty }

    /// Inspects `pkpass`.
    ///
    /// - Parameters:
    ///   - trustedRoots: PEM or DER root certificates; when given, the signer's
    ///     chain is verified against them (Apple Root CA - G3, or the
    ///     development root). Without it the chain is not judged.
    ///   - limits: bounds on unpacking.
    ///   - date: the time certificates must be valid at.
    package init(pkpass: [UInt8], trustedRoots: [UInt8]? = nil, limits: ZipReadLimits = .pass, at date: Date = Date()) {
        entries = []
        files = [:]
        manifest = nil
        signature = nil
        defects = []

        let zipEntries: [ZipEntry]
        do {
            zipEntries = try ZipArchive.read(pkpass, limits: limits)
        } catch {
            defects.append(.unreadableArchive(error.description))
            return
        }
        for entry in zipEntries {
            entries.append(Entry(name: entry.name, size: entry.bytes.count, sha1: Manifest.sha1Hex(entry.bytes)))
            files[entry.name] = entry.bytes
            if PassPackager.layoutProblem(entry.name) != nil { defects.append(.misplacedFile(entry.name)) }
        }
        for required in ["pass.json", Manifest.fileName, Manifest.signatureFileName] where files[required] == nil {
            defects.append(.missingFile(required))
        }

        checkManifest()
        checkSignature(trustedRoots: trustedRoots, at: date)
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
            let actual = Manifest.sha1Hex(files[name]!)
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

    private mutating func checkSignature(trustedRoots: [UInt8]?, at date: Date) {
        guard let signatureBytes = files[Manifest.signatureFileName],
              let manifestBytes = files[Manifest.fileName]
        else { return }
        let inspection: SignatureInspection
        switch SignatureVerification.inspect(
            signature: signatureBytes, content: manifestBytes, trustedRoots: trustedRoots, at: date
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
        if !inspection.embedsSignerIssuer { defects.append(.missingIntermediate) }
        if !signer.isValid(at: date) {
            defects.append(.certificateNotValid(notBefore: signer.notBefore, notAfter: signer.notAfter))
        }
        if case .untrusted(let reason) = inspection.chainTrust {
            defects.append(.untrustedChain(reason))
        }
        checkIdentifiers(against: signer)
    }

    /// A pass whose passTypeIdentifier or teamIdentifier does not match the
    /// certificate (its UID and OU) fails on device.
    private mutating func checkIdentifiers(against signer: CertificateSummary) {
        guard let passJSON = files["pass.json"] else { return }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(passJSON))
        } catch {
            defects.append(.unreadablePassJSON((error as NSError).localizedDescription))
            return
        }
        guard let pass = object as? [String: Any] else {
            defects.append(.unreadablePassJSON("it is not a JSON object"))
            return
        }
        if let identifier = pass["passTypeIdentifier"] as? String, identifier != signer.userID {
            defects.append(.identifierMismatch(key: "passTypeIdentifier", pass: identifier, certificate: signer.userID))
        }
        if let team = pass["teamIdentifier"] as? String, team != signer.organizationalUnit {
            defects.append(.identifierMismatch(key: "teamIdentifier", pass: team, certificate: signer.organizationalUnit))
        }
    }
}
