import PassContent
import TestSupport
@testable import PassBuild
@testable import WalletTree

extension ProjectFixture {
    /// Settings that build this project into its output folder, signed with
    /// the test PKI's leaf and with `secret` as the token secret.
    func buildSettings(secret: String, jobs: Int = 2) throws -> BuildSettings {
        var settings = BuildSettings(
            contentDirectory: directory.file("content"), templatesDirectory: directory.file("templates"),
            outputDirectory: output, configuration: try ProjectConfiguration.load(file: directory.file("passforge.yml")),
            projectStateDirectory: directory.file(".passforge"),
            environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: secret))
        settings.jobs = jobs
        return settings
    }
}
