import ArgumentParser
import CSystemCalls
import Foundation

@main
struct Passforge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passforge",
        abstract: "Build, serve and push Apple Wallet passes from content in git.",
        discussion: """
            Content editors commit templates/ and content/; `passforge build` turns them into signed .pkpass files under output/, which any static host can serve; `passforge publish` copies what changed to a static host; `passforge serve` answers the calls that change state; `passforge push` tells devices to fetch what changed.

            Examples:
              passforge build                      build every pass that changed
              passforge validate                   check content, print every problem
              passforge preview --watch            see every pass in a browser while editing
              passforge diff origin/main           what a change does to the passes
              passforge init my-passes             start a new project
              passforge inspect output/v1/passes/pass.com.example/BA-1
              passforge publish deploy@host:/srv/passforge/output
              passforge serve --port 8080          the web service over output/
              passforge push                       notify devices of the passes that changed
            """,
        version: versionLine,
        subcommands: [
            BuildCommand.self, ValidateCommand.self, InspectCommand.self, ServeCommand.self, PushCommand.self,
            PublishCommand.self, MigrateStoreCommand.self, PreviewCommand.self, DiffCommand.self, InitCommand.self,
            OffersCommand.self, DeviceCheckCommand.self, LinksCommand.self, StatsCommand.self,
        ]
    )

    /// passforge's version. `make dist` names its archive after it (scripts/dist.sh reads it back
    /// from the built binary's `--version`), and the CI workflows key their cache by it.
    static let version = "0.1.0"

    /// What `passforge --version` prints: "0.1.0 (commit 884a15a2b3c4)". The commit is linked in
    /// by `make dist` (scripts/dist.sh, over CSystemCalls' weak default); a plain `swift build` has none.
    static var versionLine: String {
        let commit = String(cString: passforge_build_commit())
        return "\(version) (\(commit.isEmpty ? "unknown commit" : "commit \(commit)"))"
    }
}
