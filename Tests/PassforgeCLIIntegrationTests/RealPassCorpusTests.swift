import Foundation
import TestSupport
import Testing

/// `passforge inspect` agrees with Wallet on passes other issuers made:
/// real passes from public repositories (Tests/Fixtures/RealPasses, with
/// their sources and licences in its README), and passes re-signed with the
/// test PKI for each layout Wallet accepts or refuses.
@Suite struct RealPassCorpusTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path
    static let appleRoot = fixtures + "/AppleIncRoot.pem"

    enum Verdict: Sendable, CustomStringConvertible {
        case accepted
        /// Refused (exit 1), with these texts among the defects.
        case refused([String])

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused(let causes): "refused: \(causes)"
            }
        }
    }

    static let scrubbed: Verdict = .refused(["defect: manifest.json is missing", "defect: signature is missing"])
    static let verdicts: [(file: String, verdict: Verdict)] = [
        ("kitinerary-airbaltic.pkpass", scrubbed),
        ("kitinerary-airberlin.pkpass", scrubbed),
        ("kitinerary-apple-semantic-event-ticket-scrubbed.pkpass", scrubbed),
        ("kitinerary-apple-store-UA-sample-unsigned-scrubbed.pkpass", scrubbed),
        ("kitinerary-cleartrip.pkpass", scrubbed),
        ("kitinerary-eurowings.pkpass", scrubbed),
        ("kitinerary-lufthansa-with-timezone.pkpass", scrubbed),
        ("kitinerary-lufthansa.pkpass", scrubbed),
        ("kitinerary-motel-one-synthetic.pkpass", scrubbed),
        ("kitinerary-swiss.pkpass", scrubbed),
        (
            "kitinerary-lufthansa.pkpasses",
            .refused([
                "defect: lufthansa.pkpass: manifest.json is missing",
                "defect: lufthansa-with-timezone.pkpass: signature is missing",
            ])
        ),
        ("kpkpass-boardingpass-v1.pkpass", scrubbed),
        ("kpkpass-boardingpass-v2.pkpass", scrubbed),
        // Apple's sample passes, signed in 2012 through WWDR G1.
        ("ueman-Coupon.pkpass", .accepted),
        ("ueman-Event.pkpass", .accepted),
        ("ueman-Generic.pkpass", .accepted),
        ("ueman-StoreCard.pkpass", .accepted),
        ("ueman-BoardingPass.pkpass", .refused(["pass.json cannot be read: line 76, column 7", "trailing comma"])),
        ("ueman-BoardingPass_unsigned.pkpass", .refused(["defect: pass.json was changed after signing"])),
        ("ueman-generic_with_invalid_checksum.pkpass", .refused(["defect: pass.json was changed after signing"])),
        (
            "ueman-generic_with_missing_checksum.pkpass",
            .refused([
                "defect: thumbnail@2x.png is not listed in manifest.json",
                "signature does not verify over manifest.json",
            ])
        ),
        // Written by Dart's `archive` (data-descriptor flag with sizes), signed by subject key identifier.
        ("ueman-cinema.pkpass", .accepted),
        // Signed by a certificate from WWDR G4, with G1 embedded.
        ("ueman-coffee_club.pkpass", .refused(["issued by Apple WWDR G4", "but the signature embeds Apple WWDR G1"])),
        (
            "ueman-apple_passkit-coupon.pkpass",
            .refused(["issued by Apple WWDR G4", "but the signature embeds Apple WWDR G1"])
        ),
    ]

    @Test func everyFixtureHasAVerdict() async throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures + "/RealPasses")
            .filter { $0.hasSuffix(".pkpass") || $0.hasSuffix(".pkpasses") }
        #expect(Set(files) == Set(Self.verdicts.map(\.file)))
        #expect(files.count >= 20)
    }

    @Test(arguments: verdicts.map { $0 })
    func verdictAsOfSigningTimeAgainstApplesRoot(_ fixture: (file: String, verdict: Verdict)) async throws {
        let result = try await runProcessWithoutBlocking(
            passforgeExecutable(),
            [
                "inspect", Self.fixtures + "/RealPasses/" + fixture.file, "--valid-at", "signing", "--trusted-root",
                Self.appleRoot,
            ])
        switch fixture.verdict {
        case .accepted:
            #expect(result.status == 0, "\(fixture.file): \(result.output)")
            #expect(result.stdout.contains("chain: trusted"), "\(result.stdout)")
        case .refused(let causes):
            #expect(result.status == 1, "\(fixture.file): \(result.output)")
            for cause in causes { #expect(result.stderr.contains(cause), "\(fixture.file): \(result.stderr)") }
        }
    }

    @Test func oldPassesFailNowButNotAsOfTheirSigningTime() async throws {
        let path = Self.fixtures + "/RealPasses/ueman-Coupon.pkpass"
        let now = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["inspect", path, "--trusted-root", Self.appleRoot])
        #expect(now.status == 1)
        // Two causes, one defect each: the signer expired (in 2016), and so
        // did the intermediate it chains through (WWDR G1, in 2023); the
        // chain's own "expired" for the signer is not repeated.
        #expect(now.stderr.components(separatedBy: "defect: ").count - 1 == 2, "\(now.stderr)")
        #expect(
            now.stderr.contains("the signing certificate is valid from 2015-07-21T21:52:25Z to 2016-07-20T21:52:25Z"),
            "\(now.stderr)")
        #expect(now.stderr.contains("certificate has expired (Apple WWDR G1"), "\(now.stderr)")
        let given = try await runProcessWithoutBlocking(
            passforgeExecutable(),
            ["inspect", path, "--trusted-root", Self.appleRoot, "--valid-at", "2016-01-01T00:00:00Z"])
        #expect(given.status == 0, "\(given.output)")
        let wrong = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["inspect", path, "--valid-at", "yesterday"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("is not signing, now or an RFC 3339 date"), "\(wrong.stderr)")
    }

    @Test func bundleMembersAreEachInspected() async throws {
        let result = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["inspect", Self.fixtures + "/RealPasses/kitinerary-lufthansa.pkpasses"])
        #expect(result.stdout.contains("bundle: 2 passes (.pkpasses)"), "\(result.stdout)")
        #expect(result.stdout.contains("== lufthansa.pkpass"))
        #expect(result.stdout.contains("== lufthansa-with-timezone.pkpass"))
    }
}

/// Passes signed with the test PKI in each layout of issue 23: accepted
/// when Wallet accepts them, refused naming the cause when it does not.
@Suite struct ResignedVariantTests {
    let pki = TestPKI.shared
    let directory = TemporaryDirectory("resigned")

    static func passJSON(_ extra: String = "", serial: String = "\"serialNumber\": \"R-1\",") -> String {
        """
        {"formatVersion": 1, "passTypeIdentifier": "\(TestPKI.passType)", "teamIdentifier": "\(TestPKI.team)",
         \(serial) "organizationName": "Example", "description": "Re-signed test pass",
         "generic": {"primaryFields": [{"key": "gate", "label": "Gate", "value": "A1", "changeMessage": "gateChange"}]}\(extra)}
        """
    }

    /// Writes `files`, their manifest and an `openssl cms` signature (with
    /// `signOptions`), zipped by `zip`, and returns the .pkpass path.
    func pass(
        _ name: String, _ files: [String: [UInt8]], signOptions: [String] = [], leaf: TestPKI.Leaf? = nil,
        zip: ([(String, [UInt8])]) -> [UInt8] = storedZip
    ) async throws -> String {
        let leaf = leaf ?? pki.leaf()
        var all = files
        all["icon.png"] = PNGFactory.png(width: 29, height: 29)
        all["icon@2x.png"] = PNGFactory.png(width: 58, height: 58)
        let manifest =
            "{" + all.keys.sorted().map { "\"\($0)\": \"\(sha1Hex(all[$0]!))\"" }.joined(separator: ", ") + "}"
        let manifestPath = directory.write("\(name).manifest.json", manifest)
        let signaturePath = directory.file("\(name).signature")
        let signed = try await runProcessWithoutBlocking(
            "openssl",
            [
                "cms", "-sign", "-binary", "-in", manifestPath, "-signer", leaf.certificate, "-inkey", leaf.key,
                "-certfile", pki.wwdr, "-outform", "DER", "-out", signaturePath, "-md", "sha256",
            ] + signOptions)
        try #require(signed.status == 0, "\(signed.output)")
        all["manifest.json"] = Array(manifest.utf8)
        all["signature"] = Array(try Data(contentsOf: URL(fileURLWithPath: signaturePath)))
        return directory.write("\(name).pkpass", bytes: zip(all.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
    }

    func inspect(_ path: String, _ extra: [String] = []) async throws -> ProcessResult {
        try await runProcessWithoutBlocking(
            passforgeExecutable(), ["inspect", path, "--trusted-root", pki.root] + extra)
    }

    let strings: [String: [UInt8]] = ["en.lproj/pass.strings": Array("\"gateChange\" = \"Gate changed to %@\";\n".utf8)]

    @Test func dataDescriptorLayoutIsAccepted() async throws {
        let path = try await pass(
            "descriptor", ["pass.json": Array(Self.passJSON().utf8)].merging(strings) { $1 },
            zip: { dataDescriptorZip($0) })
        // Every conforming reader reads it: unzip too.
        #expect(try await runProcessWithoutBlocking("unzip", ["-tq", path]).status == 0)
        let result = try await inspect(path)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func keyIdentifierSignerIsRead() async throws {
        let path = try await pass(
            "keyid", ["pass.json": Array(Self.passJSON().utf8)].merging(strings) { $1 }, signOptions: ["-keyid"])
        let signature = try await runProcessWithoutBlocking(
            "sh", ["-c", "unzip -p '\(path)' signature | openssl cms -cmsout -inform DER -print -noout"])
        #expect(signature.stdout.contains("subjectKeyIdentifier"), "\(signature.output)")
        let result = try await inspect(path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("signature: verifies over manifest.json"))
    }

    @Test func trailingCommaIsADefectWhenSigned() async throws {
        let path = try await pass(
            "comma", ["pass.json": Array(Self.passJSON(", \"barcodes\": [],").utf8)].merging(strings) { $1 })
        let result = try await inspect(path)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("pass.json cannot be read"), "\(result.stderr)")
        #expect(result.stderr.contains("trailing comma"), "\(result.stderr)")
    }

    @Test func utf16IsADefectWhenSigned() async throws {
        let text = Self.passJSON()
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let path = try await pass("utf16", ["pass.json": utf16].merging(strings) { $1 })
        let result = try await inspect(path)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("it is UTF-16"), "\(result.stderr)")
    }

    @Test func localizedChangeMessageIsResolvedThroughPassStrings() async throws {
        let good = try await inspect(
            try await pass("localized", ["pass.json": Array(Self.passJSON().utf8)].merging(strings) { $1 }))
        #expect(good.status == 0, "\(good.output)")
        let bad = try await inspect(
            try await pass(
                "localized-bad",
                [
                    "pass.json": Array(Self.passJSON().utf8),
                    "de.lproj/pass.strings": Array("\"gateChange\" = \"Neues Gate\";\n".utf8),
                ]))
        #expect(bad.status == 1)
        #expect(
            bad.stderr.contains("changeMessage \"gateChange\" (in de.lproj/pass.strings: \"Neues Gate\") has no %@"),
            "\(bad.stderr)")
    }

    @Test func everyDefectOfABrokenPassIsReported() async throws {
        // Trailing comma, no serialNumber, colour "blue": the other checks
        // still run on what a lenient reader gets.
        let json = Self.passJSON(", \"backgroundColor\": \"blue\", \"foregroundColor\": \"rgb(1, 2, 3)\",", serial: "")
        let result = try await inspect(
            try await pass("broken", ["pass.json": Array(json.utf8)].merging(strings) { $1 }))
        #expect(result.status == 1)
        for cause in [
            "pass.json cannot be read", "required key \"serialNumber\" is missing", "backgroundColor \"blue\"",
        ] {
            #expect(result.stderr.contains(cause), "\(result.stderr)")
        }
    }

    @Test func hexColoursAndAlignmentOnPrimaryFieldsAreWarnings() async throws {
        let json = Self.passJSON(", \"backgroundColor\": \"#1595d7\"")
            .replacingOccurrences(
                of: "\"changeMessage\": \"gateChange\"",
                with: "\"changeMessage\": \"gateChange\", \"textAlignment\": \"PKTextAlignmentCenter\"")
        let result = try await inspect(
            try await pass("guidance", ["pass.json": Array(json.utf8)].merging(strings) { $1 }))
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("warning: pass.json backgroundColor: backgroundColor \"#1595d7\" is a hex colour"),
            "\(result.stdout)")
        #expect(result.stdout.contains("[field.textAlignment.placement]"), "\(result.stdout)")
    }

    @Test func bundleOfResignedPassesIsAcceptedAndItsOddMembersNamed() async throws {
        let member = try await pass("member", ["pass.json": Array(Self.passJSON().utf8)].merging(strings) { $1 })
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: member)))
        let good = directory.write("good.pkpasses", bytes: storedZip([("a.pkpass", bytes), ("b.pkpass", bytes)]))
        let result = try await inspect(good)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("bundle: 2 passes (.pkpasses)"))
        let odd = directory.write(
            "odd.pkpasses", bytes: storedZip([("a.pkpass", bytes), ("readme.txt", Array("hi".utf8))]))
        let oddResult = try await inspect(odd)
        #expect(oddResult.status == 1)
        #expect(
            oddResult.stderr.contains("defect: readme.txt is not a pass; a .pkpasses bundle holds only .pkpass files"),
            "\(oddResult.stderr)")
    }

    @Test func filesWalletDoesNotUseAreWarnings() async throws {
        // pass-builder adds tooling.json; Wallet ignores it, and a thumbnail a generic pass shows is fine.
        let path = try await pass(
            "tooling",
            [
                "pass.json": Array(Self.passJSON().utf8), "tooling.json": Array("{}".utf8),
                "footer.png": PNGFactory.png(width: 10, height: 10),
            ].merging(strings) { $1 })
        let result = try await inspect(path)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("warning: tooling.json: tooling.json is not a pass image name"), "\(result.stdout)")
        #expect(result.stdout.contains("[image.notAllowed]"), "\(result.stdout)")
    }

    @Test func anImageBothTopLevelAndLocalizedIsAWarning() async throws {
        // Wallet shows the top-level one; the build refuses the pair in your own content.
        let path = try await pass(
            "localized-logo",
            [
                "pass.json": Array(Self.passJSON().utf8), "logo.png": PNGFactory.png(width: 160, height: 50),
                "de.lproj/logo.png": PNGFactory.png(width: 160, height: 50),
            ].merging(strings) { $1 })
        let result = try await inspect(path)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("warning:") && result.stdout.contains("[image.localizedDuplicate]"),
            "\(result.stdout)")
    }

    @Test func terminalControlsAndLongValuesArePrintedSafely() async throws {
        let hostile = "Ticket\\n\\u001B[32msignature: verifies\\u202E" + String(repeating: "x", count: 5_000)
        let json = Self.passJSON().replacingOccurrences(of: "Re-signed test pass", with: hostile)
        let result = try await inspect(
            try await pass("hostile", ["pass.json": Array(json.utf8)].merging(strings) { $1 }))
        #expect(!result.output.contains("\u{1B}"))
        #expect(!result.output.contains("\u{202E}"))
        // The only line that starts with "signature:" is passforge's own.
        #expect(
            result.stdout.split(separator: "\n").filter { $0.hasPrefix("signature:") } == [
                "signature: verifies over manifest.json, digest SHA256"
            ], "\(result.stdout)")
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("description:") } ?? ""
        #expect(line.count < 300, "\(line.count)")
        #expect(line.hasSuffix("…"))
    }

    @Test func expiredSignerIsOneDefect() async throws {
        let path = try await pass(
            "expired", ["pass.json": Array(Self.passJSON().utf8)].merging(strings) { $1 }, leaf: pki.leaf(expired: true)
        )
        let result = try await inspect(path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("1 defect\n"), "\(result.stderr)")
        #expect(result.stderr.contains("the signing certificate is valid from"), "\(result.stderr)")
    }

    @Test func oversizedFilesAreRefusedBeforeReading() async throws {
        let path = directory.file("huge.pkpass")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        // A sparse file: its size, not its bytes, is what is checked.
        try handle.truncate(atOffset: UInt64(64 << 20) + 1)
        try handle.close()
        let result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is 67108865 bytes; at most 67108864 are read"), "\(result.stderr)")
    }
}

// MARK: - Zip and hashes written here, independently of passforge's writer

func sha1Hex(_ bytes: [UInt8]) -> String {
    let digest = try? runProcess("openssl", ["dgst", "-sha1", "-r"], input: Data(bytes))
    return String((digest?.stdout ?? "").prefix(40))
}

/// The build's changeMessage rule resolves a key through the template's pass.strings too.
@Suite struct BuildLocalizedChangeMessageTests {
    @Test func validateResolvesChangeMessageKeys() async throws {
        let project = ProjectFixture(passCount: 1)
        let template =
            project.directory.read("templates/card/pass.json").map { String(decoding: $0, as: UTF8.self) } ?? ""
        project.directory.write(
            "templates/card/pass.json",
            template.replacingOccurrences(
                of: #""label": "Points", "value": "{{ points }}""#,
                with: #""label": "Points", "value": "{{ points }}", "changeMessage": "pointsChange""#))
        project.directory.write("templates/card/en.lproj/pass.strings", "\"pointsChange\" = \"Points now %@\";\n")
        let good = try await project.passforge(["validate"])
        #expect(good.status == 0, "\(good.output)")

        project.directory.write("templates/card/en.lproj/pass.strings", "\"pointsChange\" = \"Points changed\";\n")
        let bad = try await project.passforge(["validate"])
        #expect(bad.status == 1)
        #expect(
            bad.output.contains(
                "changeMessage \"pointsChange\" (in en.lproj/pass.strings: \"Points changed\") has no %@"),
            "\(bad.output)")
    }
}
