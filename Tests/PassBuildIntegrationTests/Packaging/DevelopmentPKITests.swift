import Foundation
import PassPackage
import Testing

@Suite("Development PKI")
struct DevelopmentPKITests {
    func permissions(_ path: String) async throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func createsReusesAndRenews() async throws {
        let base = try makeTemporaryDirectory("devpki")
        defer { try? FileManager.default.removeItem(atPath: base) }
        // Created on demand, parents included, as under a project's .passforge/.
        let directory = base + "/.passforge/dev-pki"
        let pki = DevelopmentPKI(directory: directory)

        let first = try pki.identity(passTypeIdentifier: "pass.com.example.dev", teamIdentifier: "DEVTEAM001")
        #expect(first.passTypeIdentifier == "pass.com.example.dev")
        #expect(first.teamIdentifier == "DEVTEAM001")
        #expect(
            first.certificate.subject
                == "UID=pass.com.example.dev, CN=Pass Type ID: pass.com.example.dev, OU=DEVTEAM001, O=passforge development"
        )
        #expect(first.certificate.issuer == "CN=passforge Development WWDR, O=passforge development")
        #expect(first.wwdrCertificate.issuer == "CN=passforge Development Root, O=passforge development")
        let validity = first.certificate.notAfter.timeIntervalSince(Date()) / 86_400
        #expect(validity > 364 && validity <= 365)

        // Files: keys 0600, certificates readable.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
            .sorted()
        #expect(
            files == [
                "pass-pass.com.example.dev-DEVTEAM001-certificate.pem", "pass-pass.com.example.dev-DEVTEAM001-key.pem",
                "root-certificate.pem", "root-key.pem", "wwdr-certificate.pem", "wwdr-key.pem",
            ])
        for file in files where file.hasSuffix("-key.pem") {
            #expect(try await permissions(directory + "/" + file) == 0o600, "\(file)")
        }
        #expect(try await permissions(directory) == 0o700)
        // No temporary files left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.contains(".tmp-") })

        // The openssl tool agrees on the chain and the leaf's key usage.
        let leafPath = directory + "/pass-pass.com.example.dev-DEVTEAM001-certificate.pem"
        let verify = try await run(
            "openssl",
            [
                "verify", "-CAfile", pki.rootCertificatePath,
                "-untrusted", pki.intermediateCertificatePath, leafPath,
            ], in: directory)
        #expect(verify.output.contains(": OK"))
        let text = try await run("openssl", ["x509", "-in", leafPath, "-noout", "-text"], in: directory).output
        #expect(text.contains("Digital Signature"))
        #expect(text.contains("sha256WithRSAEncryption"))
        #expect(text.contains("Public-Key: (2048 bit)"))

        // Reused by a later run.
        let again = try DevelopmentPKI(directory: directory)
            .identity(passTypeIdentifier: "pass.com.example.dev", teamIdentifier: "DEVTEAM001")
        #expect(again.certificate.sha256Fingerprint == first.certificate.sha256Fingerprint)

        // Another pass type shares the root and intermediate.
        let other = try pki.identity(passTypeIdentifier: "pass.com.example.other", teamIdentifier: "DEVTEAM001")
        #expect(other.passTypeIdentifier == "pass.com.example.other")
        #expect(other.wwdrCertificate.sha256Fingerprint == first.wwdrCertificate.sha256Fingerprint)
        #expect(other.certificate.sha256Fingerprint != first.certificate.sha256Fingerprint)

        // Near its expiry the leaf is renewed; the ten-year CAs are kept.
        let later = Date().addingTimeInterval(362 * 86_400)
        let renewed = try pki.identity(
            passTypeIdentifier: "pass.com.example.dev", teamIdentifier: "DEVTEAM001", now: later)
        #expect(renewed.certificate.sha256Fingerprint != first.certificate.sha256Fingerprint)
        #expect(renewed.wwdrCertificate.sha256Fingerprint == first.wwdrCertificate.sha256Fingerprint)

        // A pass signed with it is clean and chains to the development root.
        let pkpass = try PassPackager(signer: renewed.makeSigner()).makePKPass(
            files: sampleFiles(passTypeIdentifier: "pass.com.example.dev", teamIdentifier: "DEVTEAM001"))
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try readBytes(pki.rootCertificatePath), at: later)
        #expect(inspection.defects == [])
        #expect(inspection.signature?.chainTrust == .trusted)
    }

    @Test func replacesAChainWhoseRootChanged() async throws {
        let directory = try makeTemporaryDirectory("devpki-reroot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pki = DevelopmentPKI(directory: directory)
        let first = try pki.identity(passTypeIdentifier: "pass.a", teamIdentifier: "T1")
        // Someone deletes the root: everything below it is made again.
        try FileManager.default.removeItem(atPath: pki.rootCertificatePath)
        let second = try pki.identity(passTypeIdentifier: "pass.a", teamIdentifier: "T1")
        #expect(second.wwdrCertificate.sha256Fingerprint != first.wwdrCertificate.sha256Fingerprint)
        #expect(second.certificate.sha256Fingerprint != first.certificate.sha256Fingerprint)
        let pkpass = try PassPackager(signer: second).makePKPass(
            files: sampleFiles(passTypeIdentifier: "pass.a", teamIdentifier: "T1"))
        #expect(PassInspection(pkpass: pkpass, trustedRoots: try readBytes(pki.rootCertificatePath)).defects == [])
    }

    @Test func rejectsEmptyIdentifiers() {
        #expect(throws: DevelopmentPKIError.self) {
            try DevelopmentPKI(directory: "/tmp/unused").identity(passTypeIdentifier: "", teamIdentifier: "T")
        }
    }
}
