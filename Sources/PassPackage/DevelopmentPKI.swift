import AtomicFiles
package import Foundation
package import PassModel

/// A local certificate chain for building passes without Apple signing
/// material: a build with no certificate configured (outside CI) signs with
/// it, so that passes can be built, inspected and served before the Apple
/// Developer account is set up.
///
/// It mirrors Apple's: a self-signed root ("passforge Development Root"), an
/// intermediate in the place of WWDR ("passforge Development WWDR"), and per
/// pass type identifier and team a Pass Type ID-style leaf whose subject
/// carries `UID` = pass type identifier and `OU` = Team ID, as Apple's Pass
/// Type ID certificates do. Passes signed with it are
/// well-formed but no device will install them: the root is not Apple's.
///
/// Everything is created once under `directory` as PEM files (keys with mode
/// 0600), each written atomically, and reused on later runs. A certificate is
/// made again when it is missing, unreadable, no longer issued by its parent,
/// or within `renewalMargin` of expiring.
package struct DevelopmentPKI: Sendable {
    package static let rootCommonName = "passforge Development Root"
    package static let intermediateCommonName = "passforge Development WWDR"
    package static let organization = "passforge development"

    package let directory: String
    /// How long before expiry a certificate is replaced.
    package var renewalMargin: TimeInterval = 7 * 24 * 3600

    package init(directory: String) {
        self.directory = directory
    }

    /// The root certificate to trust when verifying development passes
    /// (`openssl smime -verify -CAfile`, `PassInspection(…trustedRoots:)`).
    package var rootCertificatePath: String { path("root-certificate.pem") }
    package var intermediateCertificatePath: String { path("wwdr-certificate.pem") }

    /// The identity for `passTypeIdentifier` and `teamIdentifier`, creating
    /// whatever part of the chain is missing or stale.
    /// For `kind` order, an Order Type ID-style leaf; an order needs no team (order.json has none).
    package func identity(
        passTypeIdentifier: String,
        teamIdentifier: String,
        kind: WalletItemKind = .pass,
        now: Date = Date()
    ) throws(DevelopmentPKIError) -> SigningIdentity {
        guard !passTypeIdentifier.isEmpty, !teamIdentifier.isEmpty || kind == .order else {
            throw .invalidIdentifier("the pass type identifier and team identifier must not be empty")
        }
        do {
            try AtomicFileSystem.createDirectory(directory, permissions: 0o700)
        } catch {
            throw .cannotCreateDirectory(path: error.path, reason: String(cString: strerror(error.code)))
        }
        // Concurrent processes must not each create their own files.
        let lock: FileLock?
        do { lock = try FileLock.acquire(path(".lock"), blocking: true) } catch { lock = nil }
        guard let lock else { throw .cannotLock(path: path(".lock")) }
        defer { lock.release() }
        return try makeIdentity(
            passTypeIdentifier: passTypeIdentifier, teamIdentifier: teamIdentifier, kind: kind, now: now)
    }

    private func makeIdentity(
        passTypeIdentifier: String,
        teamIdentifier: String,
        kind: WalletItemKind,
        now: Date
    ) throws(DevelopmentPKIError) -> SigningIdentity {
        let tenYears: TimeInterval = 10 * 365 * 24 * 3600
        let oneYear: TimeInterval = 365 * 24 * 3600
        // Back-date by an hour so a slightly slow clock elsewhere accepts it.
        let notBefore = now.addingTimeInterval(-3600)

        let root = try credential(
            named: "root",
            request: .init(
                subject: [(.commonName, Self.rootCommonName), (.organization, Self.organization)],
                kind: .authority(pathLength: nil),
                notBefore: notBefore, notAfter: now.addingTimeInterval(tenYears)
            ),
            issuer: nil, now: now
        )
        let intermediate = try credential(
            named: "wwdr",
            request: .init(
                subject: [(.commonName, Self.intermediateCommonName), (.organization, Self.organization)],
                kind: .authority(pathLength: 0),
                notBefore: notBefore, notAfter: now.addingTimeInterval(tenYears)
            ),
            issuer: root, now: now
        )
        // The subject order of Apple's Pass Type ID (and Order Type ID) certificates: UID, CN, OU, O.
        let leaf = try credential(
            named: kind.rawValue + "-" + Self.fileNameComponent(passTypeIdentifier) + "-"
                + Self.fileNameComponent(teamIdentifier),
            request: .init(
                subject: [
                    (.userID, passTypeIdentifier),
                    (.commonName, (kind == .pass ? "Pass Type ID: " : "Order Type ID: ") + passTypeIdentifier),
                ] + (teamIdentifier.isEmpty ? [] : [(.organizationalUnit, teamIdentifier)]) + [
                    (.organization, Self.organization)
                ],
                kind: .signer,
                notBefore: notBefore, notAfter: now.addingTimeInterval(oneYear)
            ),
            issuer: intermediate, now: now,
            accept: { $0.userID == passTypeIdentifier && ($0.organizationalUnit ?? "") == teamIdentifier }
        )
        do {
            return try SigningIdentity(
                certificate: leaf.certificate, key: leaf.key, intermediate: intermediate.certificate)
        } catch {
            throw .openSSLFailure(error.description)
        }
    }

    /// Loads `<name>-certificate.pem` + `<name>-key.pem` if they are still
    /// good, or issues and writes new ones.
    private func credential(
        named name: String,
        request: CertificateIssuance.Request,
        issuer: IssuedCredential?,
        now: Date,
        accept: (CertificateSummary) -> Bool = { _ in true }
    ) throws(DevelopmentPKIError) -> IssuedCredential {
        let certificatePath = path(name + "-certificate.pem")
        let keyPath = path(name + "-key.pem")
        if let certificatePEM = AtomicFileSystem.readFile(certificatePath),
            let keyPEM = AtomicFileSystem.readFile(keyPath),
            let existing = IssuedCredential(certificatePEM: certificatePEM, keyPEM: keyPEM)
        {
            let summary = existing.summary
            let issuedByParent = issuer.map { existing.isIssued(by: $0) } ?? existing.isIssued(by: existing)
            if issuedByParent, accept(summary), summary.notBefore <= now,
                summary.notAfter > now.addingTimeInterval(renewalMargin)
            {
                return existing
            }
        }
        let issued: IssuedCredential
        do {
            issued = try CertificateIssuance.issue(request, issuer: issuer)
        } catch {
            throw .openSSLFailure(error.description)
        }
        // Key first: a certificate on disk always has its key next to it.
        do {
            try AtomicFileSystem.write(issued.keyPEM, to: keyPath, permissions: 0o600)
            try AtomicFileSystem.write(issued.certificatePEM, to: certificatePath, permissions: 0o644)
        } catch {
            throw .cannotWrite(path: error.path, reason: error.description)
        }
        return issued
    }

    private func path(_ file: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(file).path
    }

    /// `value` with everything but letters, digits, `.`, `_` and `-` replaced
    /// by `_`. Collisions are harmless: a reused leaf must also match by
    /// subject, or it is replaced.
    private static func fileNameComponent(_ value: String) -> String {
        String(
            value.unicodeScalars.map { scalar -> Character in
                let allowed =
                    scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return allowed ? Character(scalar) : "_"
            })
    }
}

package enum DevelopmentPKIError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    case invalidIdentifier(String)
    case cannotCreateDirectory(path: String, reason: String)
    case cannotLock(path: String)
    case cannotWrite(path: String, reason: String)
    case openSSLFailure(String)

    package var description: String {
        switch self {
        case .invalidIdentifier(let message):
            return "development signing: \(message)"
        case .cannotCreateDirectory(let path, let reason):
            return "cannot create the development PKI directory \(path): \(reason); check its permissions"
        case .cannotLock(let path):
            return "cannot lock \(path) to create the development certificates; check the directory's permissions"
        case .cannotWrite(let path, let reason):
            return "cannot write \(path): \(reason); check the directory's permissions and free space"
        case .openSSLFailure(let reason):
            return "cannot create the development certificates: \(reason)"
        }
    }

    package var errorDescription: String? { description }
}
