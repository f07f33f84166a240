/// Names Apple's Worldwide Developer Relations (WWDR) intermediates by
/// generation, so a message can say "the signature embeds Apple WWDR G1 but
/// the signer was issued by Apple WWDR G4" instead of two long subjects.
///
/// Apple's certificate authority page (https://www.apple.com/certificateauthority/)
/// lists the generations: G1 (expired 2023-02-07) has the CN "Apple Worldwide
/// Developer Relations Certification Authority" and no generation in its
/// subject; G2 is "Apple Worldwide Developer Relations CA - G2"; G3 to G6
/// carry the CN of G1 with `OU=G3` … `OU=G6`. Pass Type ID certificates
/// issued since January 2022 chain to G4.
package enum AppleIntermediate {
    private static let commonName = "Apple Worldwide Developer Relations Certification Authority"

    /// "Apple WWDR G4 (CN=…, OU=G4, O=Apple Inc., C=US)" or the subject as it is.
    /// The key ID tells two certificates of the same name apart.
    package static func name(of certificate: CertificateSummary) -> String {
        name(subject: certificate.subject) + (certificate.subjectKeyID.map { " key ID \($0)" } ?? "")
    }

    /// The name of the certificate that issued `certificate`, from its
    /// issuer field and authority key ID.
    package static func name(ofIssuerOf certificate: CertificateSummary) -> String {
        name(subject: certificate.issuer) + (certificate.authorityKeyID.map { " key ID \($0)" } ?? "")
    }

    static func generation(subject: String) -> String? {
        let parts = attributes(subject)
        guard let cn = parts["CN"] else { return nil }
        if cn == "Apple Worldwide Developer Relations CA - G2" { return "G2" }
        guard cn == commonName else { return nil }
        if let ou = parts["OU"], ou.count == 2, ou.hasPrefix("G"), ou.last!.isNumber { return ou }
        return parts["OU"] == "Apple Worldwide Developer Relations" ? "G1" : nil
    }

    /// "Apple WWDR G4", or the subject's CN (or the whole subject).
    package static func shortName(subject: String) -> String {
        if let generation = generation(subject: subject) { return "Apple WWDR \(generation)" }
        return attributes(subject)["CN"].map { "\"\($0)\"" } ?? "\"\(subject)\""
    }

    static func name(subject: String) -> String {
        guard let generation = generation(subject: subject) else { return "\"\(subject)\"" }
        return "Apple WWDR \(generation) (\(subject))"
    }

    /// The attributes of a one-line subject (`CN=…, OU=…`); the last wins.
    private static func attributes(_ subject: String) -> [String: String] {
        var result: [String: String] = [:]
        for part in subject.split(separator: ",") {
            let trimmed = part.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            result[String(trimmed[..<equals])] = String(trimmed[trimmed.index(after: equals)...])
        }
        return result
    }
}
