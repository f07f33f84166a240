import Foundation
import TestSupport
import Testing

/// A secret file that group or others can read — the token secret, a signing
/// key, a DeviceCheck `.p8` — gets one warning per command that names it and
/// `chmod 600`; a private one gets none.
@Suite struct SecretFileWarningTests {
    static func warnings(_ output: String, about path: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.hasPrefix("warning: \(path) holds") }
    }

    @Test func theTokenSecretFileReadableByOthersIsNamedOnce() async throws {
        let project = ProjectFixture(passCount: 3)
        var environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        environment["PASSFORGE_TOKEN_SECRET"] = nil
        let first = try await project.passforge(["build"], environment: environment)
        #expect(first.status == 0, "\(first.output)")
        let secret = ".passforge/token-secret"  // as the project names it, relative to where passforge runs
        #expect(Self.warnings(first.stderr, about: secret).isEmpty, "passforge makes it 0600: \(first.stderr)")

        #expect(chmod(project.directory.file(secret), 0o644) == 0)
        project.writeList(count: 3, points: { $0 + 1 })
        let second = try await project.passforge(["build"], environment: environment)
        #expect(second.status == 0, "\(second.output)")
        let said = Self.warnings(second.stderr, about: secret)
        #expect(said.count == 1, "\(second.stderr)")
        #expect(said.first?.contains("the token secret and every user of this machine can read it") == true, "\(said)")
        #expect(said.first?.hasSuffix("chmod 600 \(secret)") == true, "\(said)")
    }

    @Test func aSigningKeyReadableByItsGroupIsNamedOncePerCommand() async throws {
        let project = ProjectFixture(passCount: 5)
        var environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        // A copy: the shared test key stays as it is for the other tests.
        let key = project.directory.file("pass key.pem")
        try FileManager.default.copyItem(atPath: try #require(environment["PASSFORGE_SIGNING_KEY"]), toPath: key)
        environment["PASSFORGE_SIGNING_KEY"] = key

        #expect(chmod(key, 0o600) == 0)
        let quiet = try await project.passforge(["build"], environment: environment)
        #expect(quiet.status == 0 && !quiet.stderr.contains("chmod 600"), "\(quiet.output)")

        #expect(chmod(key, 0o640) == 0)
        project.writeList(count: 5, points: { $0 + 7 })
        let loud = try await project.passforge(["build"], environment: environment)
        #expect(loud.status == 0, "\(loud.output)")
        let said = Self.warnings(loud.stderr, about: "'\(key)'")
        #expect(said.count == 1, "five passes signed, one warning: \(loud.stderr)")
        #expect(said.first?.contains("a signing key and its group can read it (mode 0640)") == true, "\(said)")
        #expect(said.first?.hasSuffix("chmod 600 '\(key)'") == true, "a path with a space is quoted: \(said)")
    }

    @Test func aDeviceCheckKeyReadableByOthersIsNamed() async throws {
        let project = ProjectFixture(passCount: 0)
        let key = project.directory.file("AuthKey_KEY1234567.p8")
        let made = try await runProcessWithoutBlocking(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", key,
            ])
        #expect(made.status == 0, "\(made.output)")
        #expect(chmod(key, 0o604) == 0)
        // Nothing answers at this address: the command fails after reading the key, which is what is looked at.
        project.directory.write(
            "passforge.yml",
            """
            passTypeIdentifier: \(TestPKI.passType)
            teamIdentifier: \(TestPKI.team)
            deviceCheck: {teamIdentifier: ABCDE12345, keyIdentifier: KEY1234567, baseURL: "https://127.0.0.1:9/"}
            """)
        let token = project.directory.write("token.txt", "dG9rZW4=\n")
        let result = try await project.passforge(
            ["device-check", "validate", "--token", token],
            environment: ["PASSFORGE_DEVICECHECK_KEY": key])
        let said = Self.warnings(result.stderr, about: key)
        #expect(said.count == 1, "\(result.output)")
        #expect(said.first?.contains("the DeviceCheck key") == true, "\(said)")
        #expect(said.first?.hasSuffix("chmod 600 \(key)") == true, "\(said)")
    }
}
