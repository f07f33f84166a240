import ArgumentParser
import ConcurrencySupport
import Foundation
import PassBuild
import PassPush
import RegistrationStore
import WalletTree

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Tell the devices holding changed passes to fetch them (APNs).",
        discussion: """
            Finds every pass whose update tag is newer than the last push, collects the push tokens of the devices registered for them, and sends each token one APNs notification per pass type over one HTTP/2 connection per pass type (--connections N for more), with the Pass Type ID certificate that signs the passes (PASSFORGE_SIGNING_* or `signing:` in passforge.yml) as the TLS client certificate.

            Dead tokens (410 Unregistered, 400 BadDeviceToken) lose their registrations. 429 and 5xx answers are retried with backoff; what still fails stays pending, and so does everything a killed run did not send: the next run sends it. 403 and other errors stop the run. Exit status: 0 when every push was delivered, 1 otherwise.

            PASSFORGE_APNS_URL overrides the APNs address (default https://api.push.apple.com).

            Examples:
              passforge push
              passforge push --dry-run
              passforge push --type pass.com.example.boarding --serial BA-1042
              passforge build --push
            """
    )

    @OptionGroup var project: ProjectOptions
    @OptionGroup var options: PushOptions

    func validate() throws { try options.validate() }

    func run() async throws {
        // The process's one pool for work that blocks (index files, SQLite commits): the output folder's.
        try await Self.push(
            project: project, output: OutputFolder(directory: project.output, pool: BlockingPool()),
            options: PushRun.Options(dryRun: options.dryRun, pass: options.pass), connections: options.connections)
    }

    /// One push run from the command line (`push`, `build --push`): the store,
    /// the run, its progress and its report.
    /// `index`: the index of the build a build just committed (`build --push`); read from the output folder when nil.
    /// `output`: the process's one output tree (`build --push` hands over the build's).
    /// `connections`: HTTP/2 connections per pass type (`--connections`), else the environment's.
    static func push(
        project: ProjectOptions, output: OutputFolder, options: PushRun.Options = PushRun.Options(),
        index: PublishedIndex? = nil, connections: Int? = nil,
        quiet: Bool = false
    ) async throws {
        guard
            let (store, storeDescription) = try await StoreOpening.open(
                project: project.project, onlyIfPresent: true, pool: output.indexFiles.pool)
        else {
            Console.print(
                "no registration store yet (\(StoreOpening.defaultSQLitePath(of: project.project)) does not exist): no device to push to"
            )
            return
        }
        let settings = try project.settings(developmentSigning: false, allowHTTP: false, jobs: nil)
        let report: PushRun.Report
        do {
            var configuration = try APNsConfiguration.fromEnvironment()
            if let connections {
                configuration.connectionsPerTopic = try APNsConfiguration.connections(
                    String(connections), source: "--connections")
            }
            let operation = PushOperation(
                output: output, identities: SigningIdentities(settings: settings), store: store,
                configuration: configuration)
            report = try await operation.runOnce(options, index: index) { event in
                if !quiet { Console.progress(event, store: storeDescription) }
            }
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }

        if options.dryRun {
            for push in report.plannedPushes {
                Console.print("would push \(push.topic) to \(push.token.prefix(8))…")
            }
            Console.print(
                "dry run: \(report.changed), \(report.plannedPushes.count) push\(report.plannedPushes.count == 1 ? "" : "es") would be sent; nothing was sent or changed"
            )
            return
        }
        for failure in report.failures { Console.error("error: \(failure)") }
        if let stop = report.summary.stopReason { Console.error("error: \(stop.message)") }
        Console.print("pushed: \(report.summaryLine)")
        if !report.succeeded { throw ExitCode.failure }
    }
}
