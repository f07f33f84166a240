import Foundation
import PassPackage
import TestSupport
import Testing

@Suite("SigningIdentity: loading and certificate facts")
struct SigningIdentityTests {
    let pki: TestPKI
    init() { pki = TestPKI.withSigningFormats() }

    func expectLeaf(_ identity: SigningIdentity, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(identity.passTypeIdentifier == TestPKI.passType, sourceLocation: sourceLocation)
        #expect(identity.teamIdentifier == TestPKI.signingFormatsTeam, sourceLocation: sourceLocation)
        #expect(identity.wwdrCertificate.commonName == "passforge Test WWDR", sourceLocation: sourceLocation)
    }

    @Test func pemCertificateAndPEMKey() async throws {
        let identity = try pki.identity()
        expectLeaf(identity)
        let certificate = identity.certificate
        #expect(certificate.userID == "pass.com.example.test")
        #expect(certificate.organizationalUnit == "TEAM123456")
        #expect(certificate.commonName == "Pass Type ID: pass.com.example.test")
        #expect(certificate.organization == "passforge tests")
        #expect(
            certificate.subject
                == "UID=pass.com.example.test, CN=Pass Type ID: pass.com.example.test, OU=TEAM123456, O=passforge tests, C=US"
        )
        #expect(certificate.issuer == "CN=passforge Test WWDR, OU=G4, O=passforge tests")
        #expect(certificate.serialNumber == "03")
        // Valid for 365 days from about now.
        let days = certificate.notAfter.timeIntervalSince(certificate.notBefore) / 86_400
        #expect(abs(days - 365) < 0.01)
        #expect(abs(certificate.notBefore.timeIntervalSinceNow) < 3_600)
        #expect(certificate.isValid(at: Date()))
    }

    @Test func fingerprintIsSHA256OfTheDER() async throws {
        let identity = try pki.identity()
        let result = try await run(
            "openssl", ["x509", "-in", "leaf.pem", "-noout", "-fingerprint", "-sha256"], in: pki.directory.path)
        // "sha256 Fingerprint=AB:CD:…"
        let expected = result.output.split(separator: "=").last!
            .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ":", with: "").lowercased()
        #expect(identity.certificate.sha256Fingerprint == expected)
        #expect(identity.certificate.derBytes == (try readBytes(pki.path("leaf.der"))))
        // The identity fingerprint covers the WWDR too, and is stable across loads.
        let other = try SigningIdentity(certificatePath: pki.path("leaf.p12"), password: TestPKI.password)
        #expect(other.fingerprint == identity.fingerprint)
        #expect(identity.fingerprint != identity.certificate.sha256Fingerprint)
        #expect(identity.fingerprint.count == 64)
    }

    @Test func encryptedPKCS8Key() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("leaf.pem"),
            keyPath: pki.path("leaf-pkcs8-encrypted.key"),
            password: TestPKI.password, wwdrCertificatePath: pki.path("wwdr.pem"))
        expectLeaf(identity)
    }

    @Test func encryptedTraditionalKey() async throws {
        let keyText = String(decoding: try readBytes(pki.path("leaf-traditional-encrypted.key")), as: UTF8.self)
        #expect(keyText.contains("Proc-Type: 4,ENCRYPTED"))
        let identity = try SigningIdentity(
            certificatePath: pki.path("leaf.pem"),
            keyPath: pki.path("leaf-traditional-encrypted.key"),
            password: TestPKI.password, wwdrCertificatePath: pki.path("wwdr.pem"))
        expectLeaf(identity)
    }

    @Test(arguments: ["leaf-pkcs8-encrypted.key", "leaf-traditional-encrypted.key"])
    func wrongKeyPassword(keyFile: String) async throws {
        let keyPath = pki.path(keyFile)
        let wrongPassword = "not-the-password-1234"
        let error = #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: keyPath,
                password: wrongPassword, wwdrCertificatePath: pki.path("wwdr.pem"))
        }
        #expect(error == .wrongPassword(path: keyPath, passwordSource: "PASSFORGE_SIGNING_PASSWORD"))
        let message = error?.description ?? ""
        #expect(message.hasPrefix("the password in PASSFORGE_SIGNING_PASSWORD does not open \(keyPath)"))
        #expect(!message.contains(wrongPassword))
        #expect(!message.contains(TestPKI.password))
    }

    @Test func encryptedKeyWithoutPassword() async throws {
        let keyPath = pki.path("leaf-pkcs8-encrypted.key")
        #expect(
            throws: SigningIdentityError.passwordRequired(path: keyPath, passwordSource: "PASSFORGE_SIGNING_PASSWORD")
        ) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: keyPath,
                wwdrCertificatePath: pki.path("wwdr.pem"))
        }
    }

    @Test func passwordSourceIsNamed() async throws {
        let keyPath = pki.path("leaf-pkcs8-encrypted.key")
        #expect(throws: SigningIdentityError.wrongPassword(path: keyPath, passwordSource: "PASSFORGE_PASSWORD_COUPONS"))
        {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: keyPath, password: "nope",
                wwdrCertificatePath: pki.path("wwdr.pem"), passwordSource: "PASSFORGE_PASSWORD_COUPONS")
        }
    }

    @Test func derCertificateDERKeyAndDERWWDR() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("leaf.der"), keyPath: pki.path("leaf-key.der"),
            wwdrCertificatePath: pki.path("wwdr.der"))
        expectLeaf(identity)
    }

    @Test func p12WithBundledWWDR() async throws {
        let identity = try SigningIdentity(certificatePath: pki.path("leaf.p12"), password: TestPKI.password)
        expectLeaf(identity)
    }

    @Test func p12WithSeparateWWDR() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("leaf.p12"), password: TestPKI.password,
            wwdrCertificatePath: pki.path("wwdr.der"))
        expectLeaf(identity)
    }

    @Test func legacyP12() async throws {
        // RC2-40 / 3DES, which OpenSSL 3 only has in the legacy provider.
        let info = try await run(
            "openssl",
            [
                "pkcs12", "-in", "leaf-legacy.p12", "-info", "-noout", "-legacy",
                "-passin", "pass:\(TestPKI.password)",
            ], in: pki.directory.path)
        #expect((info.output + info.error).contains("RC2") || (info.output + info.error).contains("3DES"))
        let identity = try SigningIdentity(certificatePath: pki.path("leaf-legacy.p12"), password: TestPKI.password)
        expectLeaf(identity)
    }

    @Test func p12WithEmptyPassword() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("leaf-nopassword.p12"),
            wwdrCertificatePath: pki.path("wwdr.pem"))
        expectLeaf(identity)
    }

    @Test(arguments: ["leaf.p12", "leaf-legacy.p12"])
    func wrongP12Password(file: String) async throws {
        let path = pki.path(file)
        #expect(throws: SigningIdentityError.wrongPassword(path: path, passwordSource: "PASSFORGE_SIGNING_PASSWORD")) {
            try SigningIdentity(certificatePath: path, password: "wrong")
        }
        #expect(throws: SigningIdentityError.passwordRequired(path: path, passwordSource: "PASSFORGE_SIGNING_PASSWORD"))
        {
            try SigningIdentity(certificatePath: path)
        }
    }

    @Test func formatIsDetectedByContentNotExtension() async throws {
        let directory = try makeTemporaryDirectory("misnamed")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(try readBytes(pki.path("leaf.der")), to: directory + "/certificate.pem")
        try writeBytes(try readBytes(pki.path("leaf.p12")), to: directory + "/bundle.pem")
        try writeBytes(try readBytes(pki.path("wwdr.pem")), to: directory + "/wwdr.cer")
        expectLeaf(
            try SigningIdentity(
                certificatePath: directory + "/certificate.pem", keyPath: pki.path("leaf.key"),
                wwdrCertificatePath: directory + "/wwdr.cer"))
        expectLeaf(try SigningIdentity(certificatePath: directory + "/bundle.pem", password: TestPKI.password))
    }

    @Test func combinedPEMWithCertificateKeyAndWWDR() async throws {
        let directory = try makeTemporaryDirectory("combined")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let combined =
            try readBytes(pki.path("leaf.pem")) + readBytes(pki.path("leaf.key")) + readBytes(pki.path("wwdr.pem"))
        try writeBytes(combined, to: directory + "/all.pem")
        expectLeaf(try SigningIdentity(certificatePath: directory + "/all.pem"))
    }

    @Test func keyDoesNotMatchCertificate() async throws {
        let error = #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: pki.path("root.key"),
                wwdrCertificatePath: pki.path("wwdr.pem"))
        }
        #expect(
            error == .keyDoesNotMatchCertificate(certificatePath: pki.path("leaf.pem"), keyPath: pki.path("root.key")))
        #expect(error?.description.contains("does not belong to the certificate") == true)
    }

    @Test func notACertificate() async throws {
        let directory = try makeTemporaryDirectory("garbage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(Array("hello, I am not a certificate".utf8), to: directory + "/text.pem")
        try writeBytes([0x30, 0x03, 0x02, 0x01, 0x05], to: directory + "/der.cer")
        try writeBytes([], to: directory + "/empty.pem")
        for path in [directory + "/text.pem", directory + "/der.cer", directory + "/empty.pem", pki.path("leaf.key")] {
            #expect(throws: SigningIdentityError.notACertificate(path: path)) {
                try SigningIdentity(
                    certificatePath: path, keyPath: pki.path("leaf.key"),
                    wwdrCertificatePath: pki.path("wwdr.pem"))
            }
        }
        #expect(throws: SigningIdentityError.wwdrNotACertificate(path: pki.path("leaf.key"))) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: pki.path("leaf.key"),
                wwdrCertificatePath: pki.path("leaf.key"))
        }
    }

    @Test func notAPrivateKey() async throws {
        let error = #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: pki.path("wwdr.pem"),
                wwdrCertificatePath: pki.path("wwdr.pem"))
        }
        guard case .notAPrivateKey(let path, _) = error else {
            Issue.record("expected notAPrivateKey, got \(String(describing: error))")
            return
        }
        #expect(path == pki.path("wwdr.pem"))
    }

    @Test func missingFile() async throws {
        let error = #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(certificatePath: pki.path("no-such-file.pem"))
        }
        guard case .fileUnreadable(let path, _) = error else {
            Issue.record("expected fileUnreadable, got \(String(describing: error))")
            return
        }
        #expect(path == pki.path("no-such-file.pem"))
    }

    @Test func missingKey() async throws {
        #expect(throws: SigningIdentityError.missingPrivateKey(certificatePath: pki.path("leaf.pem"))) {
            try SigningIdentity(certificatePath: pki.path("leaf.pem"), wwdrCertificatePath: pki.path("wwdr.pem"))
        }
    }

    @Test func wwdrThatDidNotIssueTheCertificate() async throws {
        let error = #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(
                certificatePath: pki.path("leaf.pem"), keyPath: pki.path("leaf.key"),
                wwdrCertificatePath: pki.path("root.pem"))
        }
        #expect(
            error
                == .wwdrDidNotIssueCertificate(
                    wwdrPath: pki.path("root.pem"), certificatePath: pki.path("leaf.pem"),
                    certificateIssuer: "CN=passforge Test WWDR, OU=G4, O=passforge tests"))
    }

    @Test func missingWWDR() async throws {
        #expect(throws: SigningIdentityError.missingWWDRCertificate(certificatePath: pki.path("leaf.pem"))) {
            try SigningIdentity(certificatePath: pki.path("leaf.pem"), keyPath: pki.path("leaf.key"))
        }
    }

    @Test func expiredCertificateLoadsAndSaysSo() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("expired.pem"), keyPath: pki.path("leaf.key"),
            wwdrCertificatePath: pki.path("wwdr.pem"))
        let formatter = ISO8601DateFormatter()
        #expect(identity.certificate.notBefore == formatter.date(from: "2020-01-01T00:00:00Z"))
        #expect(identity.certificate.notAfter == formatter.date(from: "2021-01-01T00:00:00Z"))
        #expect(!identity.certificate.isValid(at: Date()))
        #expect(identity.passTypeIdentifier == TestPKI.passType)
    }

    @Test func exportsPEMForTLSClients() async throws {
        let identity = try pki.identity()
        #expect(identity.certificatePEM == (try readBytes(pki.path("leaf.pem"))))
        let exported = String(decoding: identity.exportPrivateKeyPEM(), as: UTF8.self)
        #expect(exported.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }
}
