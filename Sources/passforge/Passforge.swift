import ArgumentParser
import Foundation

@main
struct Passforge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passforge",
        abstract: "Build, serve and push Apple Wallet passes from content in git.",
        discussion: """
        Content editors commit templates/ and content/; `passforge build` turns them into signed .pkpass files under output/, which any static host can serve; `passforge serve` answers the calls that change state; `passforge push` tells devices to fetch what changed.

        Examples:
          passforge build                      build every pass that changed
          passforge validate                   check content, print every problem
          passforge inspect output/v1/passes/pass.com.example/BA-1
          passforge serve --port 8080          the web service over output/
          passforge push                       notify devices of the passes that changed
        """,
        version: "0.1.0",
        subcommands: [Build.self, Validate.self, Inspect.self, Serve.self, Push.self, MigrateStore.self]
    )
}

/// Options every command that reads the project shares (DESIGN.md "Global options").
struct ProjectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Project configuration.", discussion: "Default: ./passforge.yml when present.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Folder of pass definitions.", valueName: "dir"))
    var content: String = "content"

    @Option(help: ArgumentHelp("Folder of templates.", valueName: "dir"))
    var templates: String = "templates"

    @Option(help: ArgumentHelp("Output tree.", valueName: "dir"))
    var output: String = "output"
}
