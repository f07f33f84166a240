import Crypto
package import Foundation
import PassModel

/// The facts about an X.509 certificate that a pass build and `passforge
/// inspect` need.
package struct CertificateSummary: Sendable, Hashable {
    /// The subject on one line, in certificate order, e.g.
    /// `UID=pass.com.example, CN=Pass Type ID: pass.com.example, OU=ABCDE12345, O=Example, C=US`.
    package var subject: String
    /// The issuer on one line, in the same form as `subject`.
    package var issuer: String
    /// The subject's common name (CN), e.g. `Pass Type ID: pass.com.example`.
    package var commonName: String?
    /// The subject's UID (OID 0.9.2342.19200300.100.1.1). Apple puts the
    /// pass type identifier here in a Pass Type ID certificate.
    package var userID: String?
    /// The subject's organizational unit (OU). Apple puts the Team ID here
    /// in a Pass Type ID certificate.
    package var organizationalUnit: String?
    /// The subject's organization (O).
    package var organization: String?
    /// The serial number, as uppercase hex.
    package var serialNumber: String
    package var notBefore: Date
    package var notAfter: Date
    /// The certificate's DER encoding.
    package var derBytes: [UInt8]
    /// The subject key identifier (colon-separated upper-case hex), if any.
    package var subjectKeyID: String?
    /// The authority key identifier: the key ID of the certificate that
    /// issued this one (colon-separated upper-case hex), if any.
    package var authorityKeyID: String?

    package init(
        subject: String,
        issuer: String,
        commonName: String?,
        userID: String?,
        organizationalUnit: String?,
        organization: String?,
        serialNumber: String,
        notBefore: Date,
        notAfter: Date,
        derBytes: [UInt8],
        subjectKeyID: String? = nil,
        authorityKeyID: String? = nil
    ) {
        self.subject = subject
        self.issuer = issuer
        self.commonName = commonName
        self.userID = userID
        self.organizationalUnit = organizationalUnit
        self.organization = organization
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.derBytes = derBytes
        self.subjectKeyID = subjectKeyID
        self.authorityKeyID = authorityKeyID
    }

    /// Lowercase hex SHA-256 of the DER encoding. A build records it to
    /// notice that the signing identity changed and every pass must be
    /// re-signed.
    package var sha256Fingerprint: String {
        SHA256.hash(data: derBytes).hexString
    }

    /// Whether `date` lies within the validity period.
    package func isValid(at date: Date) -> Bool {
        notBefore <= date && date <= notAfter
    }
}
