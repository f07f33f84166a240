import ArgumentParser
import ConcurrencySupport
import Foundation
import PassBuild
import PassContent
import PassDiff
import PassRender
import RegistrationStore
import TextEscaping
import WalletTree

struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show what a git change does to the passes: for reviews and pull-request comments.",
        discussion: """
            Renders every pass at BASE and at HEAD (default: the working tree) as `passforge build` does,
            without signing, and lists the passes added, changed and removed; for each changed pass every
            field's value before -> after, images changed (with pixel sizes) and other keys changed.

            It flags a changed field value with no changeMessage (the phone updates silently), a removed
            pass, and what the build refuses: a serial or token change, or a content error. When the
            registration store is reachable (PASSFORGE_DATABASE_URL, default state/registrations.sqlite),
            it says how many devices each change will push.

            Exits 1 only when `passforge build` would refuse HEAD.

            Examples:
              passforge diff HEAD~1                      the working tree against the last commit but one
              passforge diff origin/main HEAD --format markdown > comment.md
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Accept an http:// webServiceURL, as `build --allow-http-web-service` does.")
    var allowHTTPWebService = false

    @Argument(help: ArgumentHelp("Git revision to compare with.", valueName: "base"))
    var base: String

    @Argument(help: ArgumentHelp("Git revision of the change (default: the working tree).", valueName: "head"))
    var head: String?

    @Option(help: ArgumentHelp("text (default) or markdown (a pull-request comment).", valueName: "format"))
    var format: String = "text"

    func validate() throws {
        guard DiffReport.Format(rawValue: format) != nil else {
            throw ValidationError("--format must be text or markdown")
        }
    }

    func run() async throws {
        // Both sides are read relative to the project's root (the working tree's, and the same folder in each
        // snapshot), so their file names compare equal; nothing changes passforge's working directory.
        let root = project.root
        let diff: PassDiff
        do {
            let baseSnapshot = try await GitSnapshot(revision: base, projectRoot: root.path)
            let headSnapshot: GitSnapshot? =
                if let head { try await GitSnapshot(revision: head, projectRoot: root.path) } else { nil }
            func rendering(of directory: String?) throws -> UnsignedRendering {
                let settings = try project.settings(
                    developmentSigning: true, allowHTTP: allowHTTPWebService, jobs: nil, snapshot: directory)
                return PassDiff.render(
                    projectDirectory: directory ?? root.path, renderer: PassBuilder(settings: settings))
            }
            diff = PassDiff(
                base: try rendering(of: baseSnapshot.projectDirectory),
                head: try rendering(of: headSnapshot?.projectDirectory))
        } catch let failure as GitSnapshot.Failure {
            // The revision's name and git's own message come from outside: one line, no escapes.
            Console.error("error: \(TerminalText.lines(failure.description))")
            throw ExitCode.failure
        }
        let devices = await deviceCounts(for: diff.changed.map(\.key) + diff.removed.map(\.key))
        let report = DiffReport(diff: diff, base: base, head: head ?? "working tree", devices: devices)
        let chosen = DiffReport.Format(rawValue: format)!
        // Each outside value is already on one line of its own; text output is filtered once more as a whole, the
        // last filter before the terminal (Markdown keeps its own: its characters are inert in a code span).
        let rendered = report.render(chosen)
        FileHandle.standardOutput.write(Data((chosen == .text ? TerminalText.lines(rendered) : rendered).utf8))
        if diff.buildWouldRefuse { throw ExitCode.failure }
    }

    /// Devices registered for each pass, when the registration store can be opened; nil otherwise.
    func deviceCounts(for keys: [String]) async -> [String: Int]? {
        // The command's one pool for the SQLite store's blocking work.
        guard
            let opened = try? await StoreOpening.open(
                project: project.project, onlyIfPresent: true, pool: BlockingPool(threadCount: 1))
        else {
            return nil
        }
        var counts: [String: Int] = [:]
        for key in keys {
            guard let (typeIdentifier, identifier) = ItemKey.split(key) else { continue }
            let type = String(typeIdentifier)
            let serial = String(identifier)
            guard let indices = try? await opened.store.indices(holding: type, serialNumbers: [serial]) else {
                return nil
            }
            counts[key] = indices.count
        }
        return counts
    }
}
