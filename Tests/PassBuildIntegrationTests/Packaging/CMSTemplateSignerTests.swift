import Foundation
import PassPackage
import TestSupport
import Testing

/// `CMSSigner` reuses the DER of its first signature as a template; these
/// tests hold it to OpenSSL's own PKCS#7 encoding (`PKCS7Signer`) byte for
/// byte, and to the `openssl` tool's verification.
@Suite("CMS template signer against OpenSSL's PKCS7_sign")
struct CMSTemplateSignerTests {
    let pki: TestPKI
    init() { pki = TestPKI.withSigningFormats() }

    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func manifest(_ number: Int) -> [UInt8] {
        Array(
            #"{"icon.png":"0123456789abcdef0123456789abcdef01234567","pass.json":"\#(String(repeating: "\(number % 10)", count: 40))"}"#
                .utf8)
    }

    /// A Pass Type ID certificate issued by the test WWDR certificate, with a
    /// key made by `openssl req -newkey <keySpec>` (a `-pkeyopt` may follow).
    func identity(newKey keySpec: [String], in directory: String) async throws -> SigningIdentity {
        try await run(
            "openssl",
            ["req", "-newkey"] + keySpec + [
                "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
                "-subj",
                "/UID=pass.com.example.sizes/CN=Pass Type ID: pass.com.example.sizes/OU=TEAM123456/O=passforge tests/C=US",
            ],
            in: directory)
        // -set_serial: leave the shared PKI's serial file alone.
        try await run(
            "openssl",
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", pki.path("wwdr.pem"), "-CAkey", pki.path("wwdr.key"),
                "-set_serial", "\(UInt32.random(in: 1000...UInt32.max))", "-days", "30", "-out", "leaf.pem",
            ],
            in: directory)
        return try SigningIdentity(
            certificatePath: directory + "/leaf.pem", keyPath: directory + "/leaf.key",
            wwdrCertificatePath: pki.path("wwdr.pem"))
    }

    /// Signs a series of manifests at `times` with one `CMSSigner` and
    /// expects each signature to equal the PKCS#7 reference's.
    func expectSameBytes(_ identity: SigningIdentity, times: [Date]) async throws {
        let signer = try identity.makeSigner()
        let reference = try identity.makePKCS7Signer()
        for (number, time) in times.enumerated() {
            let manifest = Self.manifest(number)
            let signature = try signer.signature(forManifest: manifest, signingTime: time)
            let expected = try reference.signature(forManifest: manifest, signingTime: time)
            #expect(signature == expected, "signature \(number), dated \(time)")
        }
        for time in times {
            #expect(signer.usesTemplate(for: time), "no template was made for \(time)")
        }
    }

    /// Twice each: the first signature of a form makes the template, the second uses it.
    static let times: [Date] = [
        date("2026-03-04T05:06:07Z"), date("2026-11-23T23:59:59Z"),
        // OpenSSL switches from UTCTime to GeneralizedTime at 2050 (RFC 5652 §11.3).
        date("2049-12-31T23:59:59Z"), date("2050-01-01T00:00:00Z"), date("2051-07-08T09:10:11Z"),
        date("1949-12-31T23:59:59Z"), date("1950-01-01T00:00:00Z"), date("2000-02-29T12:00:00Z"),
    ]

    @Test func equalsPKCS7SignByteForByteWithTheTestChain() async throws {
        try await expectSameBytes(try pki.identity(), times: Self.times)
    }

    @Test(arguments: [3072, 4096])
    func equalsPKCS7SignByteForByteWithOtherKeySizes(bits: Int) async throws {
        let directory = try makeTemporaryDirectory("keysize")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try await identity(newKey: ["rsa:\(bits)"], in: directory)
        try await expectSameBytes(identity, times: [Self.times[0], Self.times[1], Self.times[3], Self.times[4]])

        // And the openssl tool accepts it, and only for the signed bytes.
        let signer = try identity.makeSigner()
        _ = try signer.signature(forManifest: Self.manifest(7))
        let signature = try signer.signature(forManifest: Self.manifest(8))
        #expect(signer.usesTemplate(for: Date()))
        #expect(try await verify(signature, content: Self.manifest(8), in: directory).status == 0)
        #expect(try await verify(signature, content: Self.manifest(7), in: directory).status != 0)
    }

    @Test(arguments: [Self.times[0], Self.times[4]])
    func opensslVerifiesATemplateSignatureAndRejectsAChangedManifest(time: Date) async throws {
        let directory = try makeTemporaryDirectory("template-verify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let signer = try pki.identity().makeSigner()
        _ = try signer.signature(forManifest: Self.manifest(1), signingTime: time)
        let manifest = Self.manifest(2)
        let signature = try signer.signature(forManifest: manifest, signingTime: time)
        #expect(signer.usesTemplate(for: time))

        let result = try await verify(signature, content: manifest, in: directory)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("Verification successful"))
        let cms = try await run(
            "openssl",
            [
                "cms", "-verify", "-binary", "-inform", "DER", "-in", "signature", "-content", "manifest.json",
                "-CAfile", pki.path("root.pem"), "-purpose", "any", "-out", "/dev/null",
            ],
            in: directory, check: false)
        #expect(cms.status == 0, "\(cms.error)")

        var changed = manifest
        changed[changed.count - 3] ^= 0x01
        let tampered = try await verify(signature, content: changed, in: directory)
        #expect(tampered.status != 0)
        #expect(tampered.error.contains("digest failure") || tampered.error.contains("Verification failure"))
    }

    /// RFC 5652 §11.3. OpenSSL 3.0's PKCS7_add0_attrib_signing_time would
    /// tag a 2050 time UTCTime with a four-digit year; neither path does.
    @Test(arguments: [
        ("2049-12-31T23:59:59Z", "UTCTIME           :491231235959Z"),
        ("2050-01-01T00:00:00Z", "GENERALIZEDTIME   :20500101000000Z"),
        ("1949-12-31T23:59:59Z", "GENERALIZEDTIME   :19491231235959Z"),
        ("1950-01-01T00:00:00Z", "UTCTIME           :500101000000Z"),
    ])
    func signingTimeIsUTCTimeFrom1950To2049AndGeneralizedTimeOtherwise(time: String, printed: String) async throws {
        let directory = try makeTemporaryDirectory("signing-time")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let signer = try pki.identity().makeSigner()
        _ = try signer.signature(forManifest: Self.manifest(1), signingTime: Self.date(time))
        try writeBytes(
            try signer.signature(forManifest: Self.manifest(2), signingTime: Self.date(time)),
            to: directory + "/signature")
        #expect(signer.usesTemplate(for: Self.date(time)))
        let parsed = try await run("openssl", ["asn1parse", "-inform", "DER", "-in", "signature"], in: directory).output
        #expect(parsed.contains(printed), "\(parsed)")
    }

    @Test func aSignerSharedByThreadsGivesTheReferenceBytes() async throws {
        let identity = try pki.identity()
        let signer = try identity.makeSigner()
        let reference = try identity.makePKCS7Signer()
        let time = Self.times[0]
        _ = try signer.signature(forManifest: Self.manifest(0), signingTime: time)
        let results = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var last: [UInt8] = []
                    for round in 0..<10 {
                        last = try signer.signature(forManifest: Self.manifest(worker * 10 + round), signingTime: time)
                    }
                    return (worker, last)
                }
            }
            var all: [(Int, [UInt8])] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 4)
        for (worker, signature) in results {
            #expect(
                signature == (try reference.signature(forManifest: Self.manifest(worker * 10 + 9), signingTime: time)))
        }
    }

    /// ECDSA signatures differ every time, so there is no template: every
    /// signature comes from OpenSSL's PKCS#7 API, and verifies.
    @Test func aNonRSAKeyIsSignedWithoutTemplate() async throws {
        let directory = try makeTemporaryDirectory("ec-key")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let signer = try await identity(newKey: ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"], in: directory)
            .makeSigner()
        _ = try signer.signature(forManifest: Self.manifest(1))
        let signature = try signer.signature(forManifest: Self.manifest(2))
        #expect(!signer.usesTemplate(for: Date()))
        #expect(try await verify(signature, content: Self.manifest(2), in: directory).status == 0)
    }

    func verify(_ signature: [UInt8], content: [UInt8], in directory: String) async throws -> CommandResult {
        try writeBytes(content, to: directory + "/manifest.json")
        try writeBytes(signature, to: directory + "/signature")
        return try await run(
            "openssl",
            [
                "smime", "-verify", "-binary", "-inform", "DER", "-in", "signature", "-content", "manifest.json",
                "-CAfile", pki.path("root.pem"), "-purpose", "any", "-out", "/dev/null",
            ],
            in: directory, check: false)
    }
}
