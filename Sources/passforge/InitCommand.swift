import ArgumentParser
import ProjectScaffold

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Start a new project: passforge.yml, one template per pass style, one example pass each.",
        discussion: """
            Writes passforge.yml (with comments), templates/<name>/ for a boarding pass, a coupon, an
            event ticket, a generic pass and a store card (pass.json and icon and logo images), and one
            content file per template. `passforge build` and `passforge preview` work on it at once.
            Never overwrites a file: when any of them exists, nothing is written.

            Examples:
              passforge init                 in the current folder
              passforge init my-passes       in a new folder
            """
    )

    @Argument(help: ArgumentHelp("Folder of the new project (created when missing).", valueName: "dir"))
    var directory = "."

    func run() throws {
        do {
            let written = try ProjectScaffold.write(into: directory)
            let enter = directory == "." ? "" : "cd \(directory) && "
            Console.print(
                "wrote \(written.count) files into \(directory); next: \(enter)passforge preview && passforge build")
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
    }
}
