import ArgumentParser
import ConcurrencySupport
import Foundation
import PassContent
import PassPublish

struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Copy the built passes, their links and the build state to the static host.",
        discussion: """
            DEST is a folder, [user@]host:/path reached with rsync over ssh (rsync is needed on both sides), or s3://BUCKET/PREFIX (below). It receives the build-owned part of the output tree: v1/passes/, by-token/, download/ (passes and .pkpasses bundles) and .passforge/state.json with downloads.csv and bundles.json. DEST's v1/devices/ index files belong to the server there and are never written or deleted.

            Only passes whose ETag, update tag or files differ from DEST's build state, and bundles whose ETag differs from DEST's bundles.json, are sent. Order: the files of new and changed passes and bundles first, each landing whole (temporary name, then rename; modification times kept, links kept as hard links), then the build state, then the files of removed passes and bundles. A server reading DEST meanwhile always finds every pass its state lists, under every name. A publish killed at any point is completed by running it again.

            PASSFORGE_SSH_COMMAND sets the ssh command and its options (default `ssh`), for rsync and for the commands run on the host.

            s3://BUCKET/PREFIX publishes to any S3-compatible store: every name is an object of its own under PREFIX, with its Content-Type and Cache-Control: no-cache; nothing is listed. Credentials and endpoint as the AWS tools take them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, or AWS_PROFILE from ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE); AWS_REGION (default us-east-1); AWS_ENDPOINT_URL for a store other than AWS (path-style). PASSFORGE_S3_CONCURRENCY sets the requests in flight (default 32). A lock object, PREFIX/.passforge/publish.lock, keeps a second publish out.

            Examples:
              passforge publish /srv/passforge/output
              passforge publish --dry-run deploy@passes.example.com:/srv/passforge/output
              passforge publish deploy@passes.example.com:/srv/passforge/output
              PASSFORGE_SSH_COMMAND="ssh -i $HOME/.ssh/deploy_key -p 2222" passforge publish deploy@host:/srv/passforge/output
              passforge build --state-from deploy@host:/srv/passforge/output && passforge publish deploy@host:/srv/passforge/output
              AWS_PROFILE=passforge passforge publish s3://passes-bucket/prod
              AWS_ENDPOINT_URL=https://ACCOUNT.r2.cloudflarestorage.com AWS_REGION=auto passforge publish s3://passes/prod
            """
    )

    @Argument(help: ArgumentHelp("Destination: a folder, [user@]host:/path, or s3://BUCKET/PREFIX.", valueName: "dest"))
    var destination: String

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "Project configuration; its folder is the project's root (default: the working directory).",
            valueName: "file"))
    var givenConfig: String?

    @Option(
        name: .customLong("output"),
        help: ArgumentHelp("Output tree to publish (default: output, in the project's root).", valueName: "dir"))
    var givenOutput: String?

    @Flag(name: .shortAndLong, help: "Print only errors and the summary.")
    var quiet = false

    @Flag(help: "List the files that would be sent and removed (passes, links, bundles); send and remove nothing.")
    var dryRun = false

    func run() throws {
        let destination = try Console.runReportingErrors { try PublishDestination(parsing: self.destination) }
        let (quiet, dryRun) = (self.quiet, self.dryRun)
        let output = Project(configurationFile: givenConfig, output: givenOutput).outputDirectory
        let summary = try Console.runReportingErrors {
            do {
                let publisher = try Publisher(outputDirectory: output, destination: destination, pool: BlockingPool())
                if !quiet { Console.error("publishing \(output) to \(destination)…") }
                return try publisher.publish(dryRun: dryRun) { event in if !quiet { Self.report(event) } }
            } catch {
                throw PublishError(
                    (error as? PublishError)?.code ?? .failed, "publish to \(destination) failed: \(error)",
                    underlying: error)
            }
        }
        for path in summary.plannedUploads { Console.print("would send \(path)") }
        for path in summary.plannedRemovals { Console.print("would remove \(path)") }
        Console.print(summary.description)
    }

    private static func report(_ event: PublishProgress) {
        switch event {
        case .planned(let passes, let bundles, let files, let removals):
            Console.error(
                "\(passes) pass\(passes == 1 ? "" : "es") and \(bundles) bundle\(bundles == 1 ? "" : "s") to send (\(files) file\(files == 1 ? "" : "s")), \(removals) file\(removals == 1 ? "" : "s") to remove"
            )
        case .uploading(let done, let total):
            Console.progressLine("sent \(done)/\(total) files", final: done == total)
        case .sendingState:
            Console.error("sending the build state…")
        case .removing(let files):
            Console.error("removing \(files) file\(files == 1 ? "" : "s")…")
        }
    }
}
