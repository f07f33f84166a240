import Foundation
import PassContent
import PassModel
import PassPackage
import WalletTree

/// Checks a pass (or an order) against the certificate that signs it. A Pass
/// Type ID certificate carries the pass type identifier in its subject UID and
/// the Team ID in its OU; a pass whose passTypeIdentifier or teamIdentifier
/// does not match them fails on the device (Apple's "PassKit Package Format
/// Reference"), so the build refuses it. An Order Type ID certificate carries
/// the order type identifier the same way ("Building a distributable order
/// package": orderTypeIdentifier must match the signing certificate); an
/// order has no teamIdentifier, so its team is passforge.yml's when set.
enum CertificateCheck {
    static func diagnostics(
        _ resolved: SigningIdentities.Resolved, type: String, team: String, rendered: RenderedPass, now: Date = Date()
    ) -> [ContentDiagnostic] {
        let certificate = resolved.identity.certificate
        let kind = rendered.kind
        let typeKey = kind.typeIdentifierKey
        let typeLocation = rendered.source.location(at: [.key(typeKey)])
        let certificateName = kind.certificateName
        var problems: [ContentDiagnostic] = []
        if certificate.userID != type {
            problems.append(
                .error(
                    at: typeLocation, keyPath: [.key(typeKey)],
                    rule: kind == .pass ? "signing.pass-type" : "signing.order-type",
                    "the signing certificate (\(certificate.subject)) is for \(certificate.userID ?? "no \(kind.noun) type"), not \(type); \(kind == .pass ? "a pass" : "an order") signed with it fails on the device. Use the \(certificateName) of \(type) (`signing:` in passforge.yml or PASSFORGE_SIGNING_CERTIFICATE), or fix \(typeKey)"
                ))
        }
        if certificate.organizationalUnit ?? "" != team, kind == .pass || !team.isEmpty {
            let teamKeyPlace = kind == .pass ? "teamIdentifier" : "teamIdentifier in passforge.yml"
            problems.append(
                .error(
                    at: kind == .pass ? rendered.source.location(at: ["teamIdentifier"]) : typeLocation,
                    keyPath: kind == .pass ? ["teamIdentifier"] : [.key(typeKey)], rule: "signing.team",
                    "the signing certificate belongs to team \(certificate.organizationalUnit ?? "(none)"), not \(team); set \(teamKeyPlace) to the certificate's team (its subject OU)"
                ))
        }
        if !certificate.isValid(at: now) {
            let expired = certificate.notAfter < now
            problems.append(
                .error(
                    at: typeLocation, keyPath: [.key(typeKey)], rule: "signing.expired",
                    expired
                        ? "the signing certificate for \(type) expired on \(iso8601(certificate.notAfter)); \(kind.noun)s signed with it do not install. Renew the \(certificateName) in the Apple Developer portal"
                        : "the signing certificate for \(type) is not valid before \(iso8601(certificate.notBefore)); check the machine's clock"
                ))
        } else if certificate.notAfter.timeIntervalSince(now) < 30 * 86_400 {
            problems.append(
                .warning(
                    at: typeLocation, keyPath: [.key(typeKey)], rule: "signing.expiring",
                    "the signing certificate for \(type) expires on \(iso8601(certificate.notAfter)); renew it soon"))
        }
        if rendered.source["nfc"] != nil, certificate.commonName?.contains("NFC") != true, !resolved.isDevelopment {
            problems.append(
                .warning(
                    at: rendered.source.location(at: ["nfc"]), keyPath: ["nfc"], rule: "signing.nfc",
                    "the pass has an nfc dictionary but the certificate (\(certificate.commonName ?? certificate.subject)) is not an NFC-enabled Pass Type ID certificate; the NFC payload will not work"
                ))
        }
        return problems
    }
}
