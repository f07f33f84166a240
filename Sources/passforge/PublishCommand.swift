import ArgumentParser
import Foundation
import PassPublish

struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Copy the built passes, their links and the build state to the static host.",
        discussion: """
        DEST is a folder, or [user@]host:/path reached with rsync over ssh (rsync is needed on both sides). It receives the build-owned part of the output tree: v1/passes/, by-token/, download/ (passes and .pkpasses bundles) and .passforge/state.json with downloads.csv and bundles.json. DEST's v1/devices/ index files belong to the server there and are never written or deleted.

        Only passes whose ETag, update tag or files differ from DEST's build state, and bundles whose ETag differs from DEST's bundles.json, are sent. Order: the files of new and changed passes and bundles first, each landing whole (temporary name, then rename; modification times kept, links kept as hard links), then the build state, then the files of removed passes and bundles. A server reading DEST meanwhile always finds every pass its state lists, under every name. A publish killed at any point is completed by running it again.

        PASSFORGE_SSH_COMMAND sets the ssh command and its options (default `ssh`), for rsync and for the commands run on the host.

        Examples:
          passforge publish /srv/passforge/output
          passforge publish --dry-run deploy@passes.example.com:/srv/passforge/output
          passforge publish deploy@passes.example.com:/srv/passforge/output
          PASSFORGE_SSH_COMMAND="ssh -i $HOME/.ssh/deploy_key -p 2222" passforge publish deploy@host:/srv/passforge/output
          passforge build --state-from deploy@host:/srv/passforge/output && passforge publish deploy@host:/srv/passforge/output
        """
    )

    @Argument(help: ArgumentHelp("Destination: a folder, or [user@]host:/path.", valueName: "dest"))
    var destination: String

    @Option(help: ArgumentHelp("Output tree to publish.", valueName: "dir"))
    var output: String = "output"

    @Flag(name: .shortAndLong, help: "Print only errors and the summary.")
    var quiet = false

    @Flag(help: "List the files that would be sent and removed (passes, links, bundles); send and remove nothing.")
    var dryRun = false

    func run() throws {
        let destination = try Console.runReportingErrors { try PublishDestination(parsing: self.destination) }
        let (quiet, dryRun) = (self.quiet, self.dryRun)
        let summary = try Console.runReportingErrors {
            do {
                let publisher = try Publisher(outputDirectory: output, destination: destination)
                if !quiet { Console.error("publishing \(output) to \(destination)…") }
                return try publisher.publish(dryRun: dryRun) { event in if !quiet { Self.report(event) } }
            } catch {
                throw PublishError("publish to \(destination) failed: \(error)")
            }
        }
        for path in summary.plannedUploads { Console.print("would send \(path)") }
        for path in summary.plannedRemovals { Console.print("would remove \(path)") }
        Console.print(summary.description)
    }

    private static func report(_ event: PublishProgress) {
        switch event {
        case .planned(let passes, let bundles, let files, let removals):
            Console.error("\(passes) pass\(passes == 1 ? "" : "es") and \(bundles) bundle\(bundles == 1 ? "" : "s") to send (\(files) file\(files == 1 ? "" : "s")), \(removals) file\(removals == 1 ? "" : "s") to remove")
        case .uploading(let done, let total):
            Console.progressLine("sent \(done)/\(total) files", final: done == total)
        case .sendingState:
            Console.error("sending the build state…")
        case .removing(let files):
            Console.error("removing \(files) file\(files == 1 ? "" : "s")…")
        }
    }
}
