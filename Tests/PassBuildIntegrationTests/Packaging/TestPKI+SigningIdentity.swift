import PassPackage
import TestSupport

extension TestPKI {
    /// The leaf identity of `makeSigningFormats()` from PEM certificate + PEM key + PEM WWDR.
    func identity() throws -> SigningIdentity {
        try SigningIdentity(
            certificatePath: path("leaf.pem"), keyPath: path("leaf.key"),
            wwdrCertificatePath: path("wwdr.pem"))
    }
}
