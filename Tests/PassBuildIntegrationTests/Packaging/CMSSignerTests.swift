import Foundation
import PassPackage
import TestSupport
import Testing

@Suite("CMS signature, verified by the openssl tool")
struct CMSSignerTests {
    let pki: TestPKI
    init() { pki = TestPKI.withSigningFormats() }

    let manifest = Array(
        #"{"icon.png":"0123456789abcdef0123456789abcdef01234567","pass.json":"89abcdef0123456789abcdef0123456789abcdef"}"#
            .utf8)

    /// Writes manifest + signature to a fresh directory and returns it.
    func writeSigned(_ manifest: [UInt8], _ signature: [UInt8]) async throws -> String {
        let directory = try makeTemporaryDirectory("sig")
        try writeBytes(manifest, to: directory + "/manifest.json")
        try writeBytes(signature, to: directory + "/signature")
        return directory
    }

    func smimeVerify(in directory: String, content: String = "manifest.json") async throws -> CommandResult {
        try await run(
            "openssl",
            [
                "smime", "-verify", "-binary", "-inform", "DER", "-in", "signature",
                "-content", content, "-CAfile", pki.path("root.pem"), "-purpose", "any",
                "-out", "/dev/null",
            ], in: directory, check: false)
    }

    @Test func opensslVerifiesTheSignature() async throws {
        let signature = try pki.identity().makeSigner().signature(forManifest: manifest)
        let directory = try await writeSigned(manifest, signature)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await smimeVerify(in: directory)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("Verification successful"))
    }

    @Test func opensslRejectsTheSignatureOverOtherBytes() async throws {
        let signature = try pki.identity().makeSigner().signature(forManifest: manifest)
        var tampered = manifest
        tampered[tampered.count - 3] = UInt8(ascii: "0")
        let directory = try await writeSigned(tampered, signature)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await smimeVerify(in: directory)
        #expect(result.status != 0)
        #expect(result.error.contains("digest failure") || result.error.contains("Verification failure"))
    }

    @Test func signatureCarriesSigningTimeBothCertificatesAndSHA256() async throws {
        let signingTime = ISO8601DateFormatter().date(from: "2026-03-04T05:06:07Z")!
        let signature = try pki.identity().signature(forManifest: manifest, signingTime: signingTime)
        let directory = try await writeSigned(manifest, signature)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let printed = try await run(
            "openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", "signature"],
            in: directory
        ).output
        #expect(printed.contains("object: signingTime"))
        #expect(printed.contains("UTCTIME:Mar  4 05:06:07 2026 GMT"))
        #expect(printed.contains("object: messageDigest"))
        #expect(printed.contains("algorithm: sha256"))
        // Detached: no encapsulated content.
        #expect(printed.contains("eContent: <ABSENT>"))
        // No S/MIME capabilities (PKCS7_NOSMIMECAP).
        // (`openssl cms -print` names it "S/MIME Capabilities (1.2.840.113549.1.9.15)".)
        #expect(!printed.contains("1.2.840.113549.1.9.15"))
        #expect(printed.contains("object: signingTime (1.2.840.113549.1.9.5)"))

        let certificates = try await run(
            "openssl", ["pkcs7", "-inform", "DER", "-in", "signature", "-print_certs", "-noout"],
            in: directory
        ).output
        #expect(certificates.contains("subject=UID = pass.com.example.test, CN = Pass Type ID: pass.com.example.test"))
        #expect(certificates.contains("subject=CN = passforge Test WWDR"))
        #expect(certificates.components(separatedBy: "subject=").count - 1 == 2)
    }

    @Test func emptyContentCanBeSigned() async throws {
        let signature = try pki.identity().signature(forManifest: [])
        let directory = try await writeSigned([], signature)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try await smimeVerify(in: directory).status == 0)
    }

    @Test func concurrentSignersAllProduceValidSignatures() async throws {
        let identity = try pki.identity()
        let signatures = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let signer = try identity.makeSigner()
                    var last: [UInt8] = []
                    for round in 0..<5 {
                        last = try signer.signature(forManifest: Array("manifest \(worker) \(round)".utf8))
                    }
                    // The shared signer is safe to use concurrently as well.
                    _ = try identity.signature(forManifest: Array("shared \(worker)".utf8))
                    return last
                }
            }
            var all: [[UInt8]] = []
            for try await signature in group { all.append(signature) }
            return all
        }
        #expect(signatures.count == 4)
        for signature in signatures {
            // The last manifest of each worker is "manifest <w> 4".
            var matching: [Int] = []
            for worker in 0..<4 {
                let files = ["manifest.json": Array("manifest \(worker) 4".utf8), "signature": signature]
                if await verifies(files) { matching.append(worker) }
            }
            #expect(matching.count == 1)
        }
    }

    private func verifies(_ files: [String: [UInt8]]) async -> Bool {
        guard let directory = try? await writeSigned(files["manifest.json"]!, files["signature"]!) else { return false }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return (try? await smimeVerify(in: directory).status) == 0
    }
}
