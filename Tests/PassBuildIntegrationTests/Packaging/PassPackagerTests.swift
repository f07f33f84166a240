import Foundation
import PassPackage
import TestSupport
import Testing

/// The files of a small, valid pass for the test certificate.
func sampleFiles(passTypeIdentifier: String = "pass.com.example.test", teamIdentifier: String = "TEAM123456")
    -> [String: [UInt8]]
{
    [
        "pass.json": Array(
            """
            {"formatVersion":1,"passTypeIdentifier":"\(passTypeIdentifier)","teamIdentifier":"\(teamIdentifier)",
             "serialNumber":"S-1","organizationName":"Example","description":"Test","generic":{}}
            """.utf8),
        "icon.png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 100),
        "icon@2x.png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 2, count: 200),
        "en.lproj/pass.strings": Array("\"greeting\" = \"Hello\";\n".utf8),
    ]
}

@Suite("Manifest")
struct ManifestTests {
    @Test func hashesAreLowercaseSHA1AndKeysSorted() async throws {
        let manifest = Manifest(files: [
            "pass.json": Array("{}".utf8),
            "a.png": [],
            "manifest.json": [1],
            "signature": [2],
        ])
        let json = String(decoding: manifest.jsonBytes, as: UTF8.self)
        #expect(
            json
                == #"{"a.png":"da39a3ee5e6b4b0d3255bfef95601890afd80709","pass.json":"bf21a9e8fbc5a3846fb05b4fa0859e0917b2202f"}"#
        )
        #expect(try Manifest(jsonBytes: manifest.jsonBytes) == manifest)
    }

    @Test func namesAreEscaped() async throws {
        let manifest = Manifest(hashes: ["we\"ird\\name\n.png": "00"])
        #expect(String(decoding: manifest.jsonBytes, as: UTF8.self) == #"{"we\"ird\\name\u000a.png":"00"}"#)
        #expect(try Manifest(jsonBytes: manifest.jsonBytes) == manifest)
    }

    @Test func sha1MatchesTheShasumTool() async throws {
        let directory = try makeTemporaryDirectory("sha1")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try writeBytes(bytes, to: directory + "/f")
        let output = try await run("openssl", ["dgst", "-sha1", "-r", "f"], in: directory).output
        #expect(Manifest.sha1Hex(bytes) == String(output.prefix(40)))
    }

    @Test func rejectsNonObjects() {
        #expect(throws: ManifestError.notAnObject) { try Manifest(jsonBytes: Array("[1]".utf8)) }
        #expect(throws: ManifestError.valueNotAString(file: "a")) { try Manifest(jsonBytes: Array(#"{"a":1}"#.utf8)) }
    }
}

@Suite("PassPackager and PassInspection")
struct PassPackagerTests {
    let pki: TestPKI
    init() { pki = TestPKI.withSigningFormats() }

    var trustedRoot: [UInt8] { get throws { try readBytes(pki.path("root.pem")) } }

    func makePass(_ files: [String: [UInt8]] = sampleFiles(), signingTime: Date = Date()) async throws -> [UInt8] {
        try PassPackager(signer: pki.identity().makeSigner()).makePKPass(files: files, signingTime: signingTime)
    }

    /// Rewrites `pkpass` with `change` applied to its entries.
    func rewrite(_ pkpass: [UInt8], _ change: (inout [String: [UInt8]]) -> Void) async throws -> [UInt8] {
        var files: [String: [UInt8]] = [:]
        for entry in try ZipArchive.read(pkpass) { files[entry.name] = entry.bytes }
        change(&files)
        return try ZipArchive.make(files.sorted { $0.key < $1.key }.map { ZipEntry(name: $0.key, bytes: $0.value) })
    }

    @Test func packagedPassIsCleanAndComplete() async throws {
        let signingTime = Date(timeIntervalSince1970: 1_780_000_000)
        let pkpass = try await makePass(signingTime: signingTime)
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot)
        #expect(inspection.defects == [])
        let isValid = inspection.isValid
        #expect(isValid)
        #expect(
            inspection.entries.map(\.name)
                == ["pass.json", "en.lproj/pass.strings", "icon.png", "icon@2x.png", "manifest.json", "signature"])
        #expect(
            inspection.manifest?.hashes.keys.sorted() == [
                "en.lproj/pass.strings", "icon.png", "icon@2x.png", "pass.json",
            ])
        let signature = try #require(inspection.signature)
        #expect(signature.verifiesManifest)
        #expect(signature.isDetached)
        #expect(signature.signingTime == signingTime)
        #expect(signature.digestAlgorithm == "SHA256")
        #expect(signature.signer?.userID == "pass.com.example.test")
        #expect(signature.signer?.organizationalUnit == "TEAM123456")
        #expect(signature.signer?.subject.hasPrefix("UID=pass.com.example.test, CN=Pass Type ID:") == true)
        #expect(signature.embedsSignerIssuer)
        #expect(
            signature.embeddedCertificates.map(\.commonName)
                == ["Pass Type ID: pass.com.example.test", "passforge Test WWDR"])
        #expect(signature.chainTrust == .trusted)
    }

    @Test func opensslVerifiesAPackagedPass() async throws {
        let directory = try makeTemporaryDirectory("pkpass")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await writeBytes(try makePass(), to: directory + "/test.pkpass")
        try await run("unzip", ["-q", "test.pkpass", "-d", "out"], in: directory)
        let result = try await run(
            "openssl",
            [
                "smime", "-verify", "-binary", "-inform", "DER", "-in", "out/signature",
                "-content", "out/manifest.json", "-CAfile", pki.path("root.pem"),
                "-purpose", "any", "-out", "/dev/null",
            ], in: directory, check: false)
        #expect(result.status == 0, "\(result.error)")
        // Every file's SHA-1 matches the manifest, as computed by openssl.
        let manifest = try Manifest(jsonBytes: readBytes(directory + "/out/manifest.json"))
        for (name, hash) in manifest.hashes {
            let digest = try await run("openssl", ["dgst", "-sha1", "-r", "out/" + name], in: directory).output
            #expect(String(digest.prefix(40)) == hash, "\(name)")
        }
    }

    @Test func withoutTrustedRootTheChainIsNotJudged() async throws {
        let inspection = PassInspection(pkpass: try await makePass())
        #expect(inspection.defects == [])
        #expect(inspection.signature?.chainTrust == .notChecked)
    }

    @Test func tamperedPassJSON() async throws {
        let pkpass = try await rewrite(try makePass()) { files in
            files["pass.json"]! += Array(" ".utf8)
        }
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot)
        #expect(inspection.defects.count == 1)
        guard case .hashMismatch(let file, _, _) = inspection.defects.first else {
            Issue.record("expected a hash mismatch, got \(inspection.defects)")
            return
        }
        #expect(file == "pass.json")
        // The signature itself is still fine.
        #expect(inspection.signature?.verifiesManifest == true)
    }

    @Test func fileMissingFromManifestAndManifestEntryMissingFromPass() async throws {
        let pkpass = try await rewrite(try makePass()) { files in
            files["strip.png"] = [1, 2, 3]
            files["icon@2x.png"] = nil
        }
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot)
        #expect(inspection.defects == [.unlistedFile("strip.png"), .missingListedFile("icon@2x.png")])
    }

    @Test func signatureOverAnotherManifest() async throws {
        let other = try await makePass(sampleFiles().merging(["logo.png": [9]]) { $1 })
        let otherSignature = try ZipArchive.read(other).first { $0.name == "signature" }!.bytes
        let pkpass = try await rewrite(try makePass()) { files in files["signature"] = otherSignature }
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot)
        #expect(inspection.signature?.verifiesManifest == false)
        #expect(inspection.defects.count == 1)
        guard case .signatureDoesNotVerify = inspection.defects.first else {
            Issue.record("expected signatureDoesNotVerify, got \(inspection.defects)")
            return
        }
    }

    @Test(arguments: [Array("garbage".utf8), []])
    func garbageSignature(signature: [UInt8]) async throws {
        let pkpass = try await rewrite(try makePass()) { files in files["signature"] = signature }
        let inspection = PassInspection(pkpass: pkpass)
        guard case .unreadableSignature = inspection.defects.first, inspection.defects.count == 1 else {
            Issue.record("expected unreadableSignature, got \(inspection.defects)")
            return
        }
    }

    /// A signature made by `openssl smime -sign` with extra arguments.
    func opensslSignature(over manifest: [UInt8], _ extra: [String]) async throws -> [UInt8] {
        let directory = try makeTemporaryDirectory("smime")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(manifest, to: directory + "/manifest.json")
        try await run(
            "openssl",
            [
                "smime", "-sign", "-binary", "-outform", "DER", "-in", "manifest.json", "-out", "signature",
                "-signer", pki.path("leaf.pem"), "-inkey", pki.path("leaf.key"), "-md", "sha256",
            ] + extra,
            in: directory)
        return try readBytes(directory + "/signature")
    }

    @Test func signatureWithoutSigningTime() async throws {
        let pass = try await makePass()
        let manifest = try ZipArchive.read(pass).first { $0.name == "manifest.json" }!.bytes
        // -noattr leaves out all signed attributes, signing time included.
        let signature = try await opensslSignature(over: manifest, ["-noattr", "-certfile", pki.path("wwdr.pem")])
        let inspection = PassInspection(
            pkpass: try await rewrite(pass) { $0["signature"] = signature },
            trustedRoots: try trustedRoot)
        #expect(inspection.defects == [.missingSigningTime])
    }

    @Test func signatureWithoutWWDR() async throws {
        let pass = try await makePass()
        let manifest = try ZipArchive.read(pass).first { $0.name == "manifest.json" }!.bytes
        let signature = try await opensslSignature(over: manifest, [])
        let inspection = PassInspection(
            pkpass: try await rewrite(pass) { $0["signature"] = signature },
            trustedRoots: try trustedRoot)
        #expect(inspection.signature?.signingTime != nil)
        // Without the intermediate the chain cannot be built either, but
        // that is the same cause: one defect, naming what is embedded and
        // what issued the signer.
        #expect(inspection.defects.count == 1)
        guard case .missingIntermediate(let embedded, let issuer, let shortName)? = inspection.defects.first else {
            Issue.record("expected missingIntermediate, got \(inspection.defects)")
            return
        }
        #expect(embedded == [])
        #expect(issuer.contains("CN=passforge Test WWDR"))
        #expect(shortName == "\"passforge Test WWDR\"")
        #expect(inspection.defects[0].description.contains("embeds no intermediate certificate"))
    }

    @Test func attachedSignature() async throws {
        let pass = try await makePass()
        let manifest = try ZipArchive.read(pass).first { $0.name == "manifest.json" }!.bytes
        let signature = try await opensslSignature(over: manifest, ["-nodetach", "-certfile", pki.path("wwdr.pem")])
        let inspection = PassInspection(pkpass: try await rewrite(pass) { $0["signature"] = signature })
        #expect(inspection.defects.contains(.signatureNotDetached))
        #expect(inspection.signature?.verifiesManifest == true)
        // Attached over other bytes, it does not verify over the manifest.
        let other = try await opensslSignature(
            over: Array("{}".utf8), ["-nodetach", "-certfile", pki.path("wwdr.pem")])
        let otherInspection = PassInspection(pkpass: try await rewrite(pass) { $0["signature"] = other })
        #expect(otherInspection.signature?.verifiesManifest == false)
        #expect(
            otherInspection.signature?.verificationFailure == "the signature carries other content than manifest.json")
    }

    @Test func untrustedRoot() async throws {
        let inspection = PassInspection(
            pkpass: try await makePass(), trustedRoots: try readBytes(pki.path("other-root.pem")))
        #expect(inspection.defects.count == 1)
        guard case .untrustedChain(let reason) = inspection.defects.first else {
            Issue.record("expected untrustedChain, got \(inspection.defects)")
            return
        }
        #expect(reason.contains("issuer certificate"))
    }

    @Test func expiredSigningCertificate() async throws {
        let identity = try SigningIdentity(
            certificatePath: pki.path("expired.pem"), keyPath: pki.path("leaf.key"),
            wwdrCertificatePath: pki.path("wwdr.pem"))
        let pkpass = try PassPackager(signer: identity).makePKPass(files: sampleFiles())
        let inspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot)
        // One cause, one defect: the chain's "certificate has expired" is the same fact.
        #expect(inspection.defects.count == 1)
        #expect(inspection.defects.contains { if case .certificateNotValid = $0 { true } else { false } })
        // In 2020 the signing certificate was valid (the test CAs were not
        // yet, so only that is reported).
        let then = ISO8601DateFormatter().date(from: "2020-06-01T00:00:00Z")!
        let thenInspection = PassInspection(pkpass: pkpass, trustedRoots: try trustedRoot, at: then)
        #expect(thenInspection.defects == [.untrustedChain("certificate is not yet valid (\"passforge Test Root\")")])
    }

    @Test func identifiersThatDoNotMatchTheCertificate() async throws {
        let pkpass = try await makePass(sampleFiles(passTypeIdentifier: "pass.com.other", teamIdentifier: "OTHERTEAM1"))
        let inspection = PassInspection(pkpass: pkpass)
        #expect(
            inspection.defects == [
                .identifierMismatch(
                    key: "passTypeIdentifier", pass: "pass.com.other", certificate: "pass.com.example.test"),
                .identifierMismatch(key: "teamIdentifier", pass: "OTHERTEAM1", certificate: "TEAM123456"),
            ])
    }

    @Test func passZippedWithItsFolder() async throws {
        let pass = try await makePass()
        let wrapped = try ZipArchive.make(
            try ZipArchive.read(pass).map {
                ZipEntry(name: "MyPass.pass/" + $0.name, bytes: $0.bytes)
            })
        let inspection = PassInspection(pkpass: wrapped)
        #expect(inspection.defects.contains(.misplacedFile("MyPass.pass/pass.json")))
        #expect(inspection.defects.contains(.missingFile("pass.json")))
        #expect(inspection.defects.contains(.missingFile("manifest.json")))
        #expect(inspection.defects.contains(.missingFile("signature")))
    }

    @Test func notAZip() {
        let inspection = PassInspection(pkpass: Array("PK but not really".utf8))
        #expect(inspection.defects.count == 1)
        guard case .unreadableArchive = inspection.defects.first else {
            Issue.record("expected unreadableArchive, got \(inspection.defects)")
            return
        }
    }

    @Test func packagerRejectsBadInput() async throws {
        let packager = PassPackager(signer: try pki.identity())
        var files = sampleFiles()
        files["pass.json"] = nil
        #expect(throws: PassPackageError.self) { try packager.makePKPass(files: files) }
        for name in ["manifest.json", "signature", "images/icon.png", "../icon.png", ".lproj/pass.strings"] {
            let error = #expect(throws: PassPackageError.self) {
                try packager.makePKPass(files: sampleFiles().merging([name: [1]]) { $1 })
            }
            #expect(error.map { "\($0)" }?.contains(name) == true)
        }
    }

    @Test func pngsAreStoredOtherFilesDeflated() async throws {
        let directory = try makeTemporaryDirectory("methods")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await writeBytes(try makePass(), to: directory + "/p.pkpass")
        let lines = try await run("unzip", ["-v", "p.pkpass"], in: directory).output.split(separator: "\n")
        #expect(lines.first { $0.hasSuffix(" icon.png") }?.contains("Stored") == true)
        // A pass's own pass.json and manifest.json are deflated only from `minimumDeflatedSize` on.
        #expect(lines.first { $0.hasSuffix(" pass.json") }?.contains("Stored") == true)
        #expect(lines.first { $0.hasSuffix(" manifest.json") }?.contains("Stored") == true)
        var large = sampleFiles()
        let terms = String(repeating: "Points expire after 24 months. ", count: PassPackager.minimumDeflatedSize / 30)
        large["pass.json"] = Array(
            #"{"formatVersion":1,"passTypeIdentifier":"pass.com.example.test","teamIdentifier":"TEAM123456","serialNumber":"S-1","organizationName":"Example","description":"\#(terms)","generic":{}}"#
                .utf8)
        let largePass = try await makePass(large)
        try writeBytes(largePass, to: directory + "/large.pkpass")
        let largeLines = try await run("unzip", ["-v", "large.pkpass"], in: directory).output.split(separator: "\n")
        #expect(largeLines.first { $0.hasSuffix(" pass.json") }?.contains("Defl") == true)
        #expect(PassInspection(pkpass: largePass).defects == [])

        let stored = try PassPackager(signer: pki.identity(), compression: .storeAll).makePKPass(files: sampleFiles())
        try writeBytes(stored, to: directory + "/stored.pkpass")
        let storedListing = try await run("unzip", ["-v", "stored.pkpass"], in: directory).output
        #expect(!storedListing.contains("Defl"))
        #expect(PassInspection(pkpass: stored).defects == [])
    }
}
