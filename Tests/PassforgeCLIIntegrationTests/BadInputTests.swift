import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

/// Every kind of bad input gets a clear error naming the file and what to
/// do, and the output tree of the previous build stays exactly as it was.
@Suite struct BadInputTests {
    let pki = TestPKI.shared

    /// Builds a good project, applies `change`, builds again and checks the refusal.
    func expectRejected(
        _ expected: [String], environment: (TestPKI) -> [String: String] = { $0.environment($0.leaf()) },
        sourceLocation: SourceLocation = #_sourceLocation, _ change: (ProjectFixture) -> Void
    ) async throws {
        let project = ProjectFixture(passCount: 2)
        let good = try await project.passforge(["build"], environment: pki.environment(pki.leaf()))
        try #require(good.status == 0, "\(good.output)", sourceLocation: sourceLocation)
        let before = project.snapshot()
        change(project)
        let result = try await project.passforge(["build"], environment: environment(pki))
        #expect(result.status == 1, "\(result.output)", sourceLocation: sourceLocation)
        for fragment in expected {
            #expect(
                result.stderr.contains(fragment), "missing \(fragment) in:\n\(result.stderr)",
                sourceLocation: sourceLocation)
        }
        #expect(!result.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
        #expect(project.snapshot() == before, "the output tree changed", sourceLocation: sourceLocation)
    }

    @Test func malformedYAML() async throws {
        try await expectRejected(["content/cards.yml:4:1: error: invalid YAML", "flow sequence at line 3"]) {
            $0.directory.write("content/cards.yml", "template: card\npasses:\n  - serialNumber: [C-1\n")
        }
    }

    @Test func malformedJSON() async throws {
        try await expectRejected(["content/one.json:1:", "invalid JSON", "trailing comma"]) {
            $0.directory.write("content/one.json", #"{"template": "card", "serialNumber": "J-1",}"#)
        }
    }

    @Test func malformedTemplateJSON() async throws {
        try await expectRejected(["templates/card/pass.json:2:", "invalid JSON"]) {
            $0.directory.write("templates/card/pass.json", "{\n  \"description\" \"x\"\n}")
        }
    }

    @Test func unknownTemplate() async throws {
        try await expectRejected(["content/x.yml:1:11: error", "unknown template `bording`", "available: card"]) {
            $0.directory.write("content/x.yml", "template: bording\nserialNumber: X-1\n")
        }
    }

    @Test func missingPlaceholderValue() async throws {
        try await expectRejected([
            "content/x.yml:", "placeholder {{ points }} has no value", "templates/card/pass.json:6:", "note:",
        ]) {
            $0.directory.write("content/x.yml", "template: card\nserialNumber: X-1\ndata:\n  name: Ann\n")
        }
    }

    @Test func duplicateSerial() async throws {
        try await expectRejected(["content/x.yml:2:15: error", "C-0001 is already used", "first defined here"]) {
            $0.directory.write("content/x.yml", "template: card\nserialNumber: C-0001\ndata: {name: A, points: 1}\n")
        }
    }

    @Test(arguments: ["../x", "/", "", String(repeating: "a", count: 200)])
    func unsafeSerial(serial: String) async throws {
        try await expectRejected(["content/x.yml:2:", "is not allowed: it must match"]) {
            $0.directory.write(
                "content/x.yml", "template: card\nserialNumber: \"\(serial)\"\ndata: {name: A, points: 1}\n")
        }
    }

    @Test func nonPNGImage() async throws {
        try await expectRejected(["templates/card/logo.png", "PNG"]) {
            $0.directory.write("templates/card/logo.png", "<html>not an image</html>")
        }
    }

    @Test func missingIcon() async throws {
        try await expectRejected(["icon.png", "image.iconMissing"]) {
            try? FileManager.default.removeItem(atPath: $0.directory.file("templates/card/icon.png"))
            try? FileManager.default.removeItem(atPath: $0.directory.file("templates/card/icon@2x.png"))
        }
    }

    @Test func wrongCertificateForThePassType() async throws {
        try await expectRejected(
            ["passforge.yml:1:", "is for pass.com.other.type, not \(TestPKI.passType)", "signing.pass-type"],
            environment: { $0.environment($0.leaf(passType: "pass.com.other.type")) }
        ) { _ in }
    }

    @Test func wrongTeam() async throws {
        try await expectRejected(
            ["belongs to team ZZZZZ99999", "signing.team"],
            environment: { $0.environment($0.leaf(team: "ZZZZZ99999")) }
        ) { _ in }
    }

    @Test func expiredCertificate() async throws {
        try await expectRejected(
            ["expired on 2021-01-01", "Renew the Pass Type ID certificate"],
            environment: { $0.environment($0.leaf(expired: true)) }
        ) { _ in }
    }

    @Test func wrongKeyPassword() async throws {
        try await expectRejected(
            ["PASSFORGE_SIGNING_PASSWORD"],
            environment: { pki in
                var env = pki.environment(pki.leaf())
                env["PASSFORGE_SIGNING_KEY"] = pki.leaf().encryptedKey
                env["PASSFORGE_SIGNING_PASSWORD"] = "wrong password"
                return env
            }
        ) { _ in }
    }

    @Test func wrongP12Password() async throws {
        let result = try await expectRejectedOutput { pki in
            var env = pki.environment(pki.leaf())
            env["PASSFORGE_SIGNING_CERTIFICATE"] = pki.leaf().p12
            env["PASSFORGE_SIGNING_KEY"] = nil
            env["PASSFORGE_SIGNING_PASSWORD"] = "hunter2-wrong"
            return env
        }
        #expect(result.contains(".p12"))
        #expect(!result.contains("hunter2-wrong"), "a password reached the output")
    }

    func expectRejectedOutput(_ environment: @escaping (TestPKI) -> [String: String]) async throws -> String {
        let project = ProjectFixture(passCount: 1)
        let result = try await project.passforge(["build"], environment: environment(pki))
        #expect(result.status == 1)
        return result.stderr
    }

    @Test func tokenChangeOfAnExistingPass() async throws {
        try await expectRejected(
            [
                "authenticationToken of pass \(TestPKI.passType)/C-0000 would change",
                "Restore the previous PASSFORGE_TOKEN_SECRET",
            ],
            environment: { $0.environment($0.leaf(), secret: "a-completely-different-secret") }
        ) { _ in }
    }

    @Test func serialChangeOfAnExistingPass() async throws {
        let project = ProjectFixture(passCount: 0)
        project.directory.write("content/one.yml", "template: card\nserialNumber: S-1\ndata: {name: A, points: 1}\n")
        let env = pki.environment(pki.leaf())
        try #require(try await project.passforge(["build"], environment: env).status == 0)
        let before = project.snapshot()
        project.directory.write("content/one.yml", "template: card\nserialNumber: S-2\ndata: {name: A, points: 1}\n")
        let result = try await project.passforge(["build"], environment: env)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("content/one.yml:2:15: error: serialNumber: serialNumber changed from S-1 to S-2"),
            "\(result.stderr)")
        #expect(project.snapshot() == before)
    }

    @Test func appleRuleViolationPointsAtTheTemplateLine() async throws {
        try await expectRejected(["templates/card/pass.json:3:", "backgroundColor", "[color]"]) {
            $0.directory.write(
                "templates/card/pass.json",
                """
                {
                  "description": "Card",
                  "backgroundColor": "red",
                  "generic": {"primaryFields": [{"key": "name", "value": "{{ name }}"}, {"key": "pts", "value": "{{ points }}"}]}
                }
                """)
        }
    }

    @Test func allErrorsAreReportedAtOnce() async throws {
        try await expectRejected(["content/a.yml", "content/b.yml", "content/c.json", "3 errors"]) {
            $0.directory.write("content/a.yml", "template: nope\nserialNumber: A-1\n")
            $0.directory.write("content/b.yml", "template: card\nserialNumber: B-1\ndata: {name: B}\n")
            $0.directory.write("content/c.json", "{")
        }
    }

    @Test func validateReportsWithoutWriting() async throws {
        let project = ProjectFixture(passCount: 1)
        project.directory.write("content/bad.yml", "template: card\nserialNumber: B-1\ndata: {name: B}\n")
        let result = try await project.passforge(["validate"], environment: pki.environment(pki.leaf()))
        #expect(result.status == 1)
        #expect(result.stderr.contains("content/bad.yml:3:"))
        #expect(!FileManager.default.fileExists(atPath: project.output))
    }
}
