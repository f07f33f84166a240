import PassBuild
import TestSupport

extension ProjectFixture {
    /// Settings that build this project into its output folder, signed with
    /// the test PKI's leaf and with `secret` as the token secret.
    func buildSettings(secret: String, jobs: Int = 2) throws -> BuildSettings {
        try BuildSettings(
            projectFolder: root, environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: secret),
            jobs: jobs)
    }
}
