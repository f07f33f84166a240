import ArgumentParser
import Foundation
import Logging
import PassBuild
import PassPush
import RegistrationStore

struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tell the devices holding changed passes to fetch them (APNs).",
        discussion: """
        Finds every pass whose update tag is newer than the last push, collects the push tokens of the devices registered for them, and sends each token one APNs notification per pass type over one HTTP/2 connection, with the Pass Type ID certificate that signs the passes (PASSFORGE_SIGNING_* or `signing:` in passforge.yml) as the TLS client certificate.

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
        try await PushOperation(project: project, dryRun: options.dryRun, pass: options.pass).run()
    }
}

/// `push`'s own options, shared with `build --push`.
struct PushOptions: ParsableArguments {
    @Flag(help: "Print the pushes that would be sent; send nothing and change nothing.")
    var dryRun = false

    @Option(name: .customLong("type"), help: ArgumentHelp("With --serial: push this one pass now.", valueName: "passTypeIdentifier"))
    var passType: String?

    @Option(help: ArgumentHelp("With --type: push this one pass now.", valueName: "serialNumber"))
    var serial: String?

    func validate() throws {
        guard (passType == nil) == (serial == nil) else { throw ValidationError("--type and --serial go together: they name one pass") }
    }

    var pass: PassReference? {
        guard let passType, let serial else { return nil }
        return PassReference(passTypeIdentifier: passType, serialNumber: serial)
    }
}

/// One push run from the command line: the store, the APNs clients, the report.
struct PushOperation {
    var project: ProjectOptions
    var dryRun = false
    var pass: PassReference?
    var quiet = false

    func run() async throws {
        guard let (store, storeDescription) = try await StoreOpening.open(onlyIfPresent: true) else {
            Console.print("no registration store yet (\(StoreLocation.defaultSQLitePath) does not exist): no device to push to")
            return
        }
        let settings = try project.settings(developmentSigning: false, allowHTTP: false, jobs: nil)
        let senders = APNsSenders(settings: settings, configuration: try APNsEnvironment.configuration())
        let run = PushRun(store: store, outputDirectory: project.output, senders: senders)
        let quiet = self.quiet
        let report: PushRun.Report
        do {
            report = try await run.run(.init(dryRun: dryRun, pass: pass)) { event in
                guard !quiet else { return }
                switch event {
                case .queued(let changed, let pending):
                    Console.error("\(changed) changed pass\(changed == 1 ? "" : "es") since the last push; \(pending) push\(pending == 1 ? "" : "es") to send (\(storeDescription))")
                case .sending(let topic, let pushes):
                    Console.error("pushing \(topic): \(pushes) device token\(pushes == 1 ? "" : "s")")
                case .sent(let done, let total):
                    Console.progressLine("  \(done)/\(total) answered", final: done == total)
                }
            }
        } catch {
            await senders.shutdown()
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
        await senders.shutdown()

        if dryRun {
            for push in report.plannedPushes {
                Console.print("would push \(push.topic) to \(push.token.prefix(8))…")
            }
            Console.print("dry run: \(report.changedPasses) changed pass\(report.changedPasses == 1 ? "" : "es"), \(report.plannedPushes.count) push\(report.plannedPushes.count == 1 ? "" : "es") would be sent; nothing was sent or changed")
            return
        }
        for failure in report.failures { Console.error("error: \(failure)") }
        if let stop = report.summary.stopReason { Console.error("error: \(stop.message)") }
        let summary = report.summary
        Console.print("pushed: sent \(summary.sent), succeeded \(summary.succeeded), removed tokens \(summary.tokensInvalid) (\(report.removedDevices) device\(report.removedDevices == 1 ? "" : "s")), retried \(summary.retries), failed \(summary.leftPending) (left pending for the next run)")
        if !report.succeeded { throw ExitCode.failure }
    }
}

/// `serve --push`: watches the build state and runs a push whenever a new
/// build is committed (and once at start, to finish what a previous run left).
/// One run at a time; a run's pushes of a build that changes meanwhile are
/// merged into the next run's queue by the store.
struct PushOnNewBuild: Sendable {
    let run: PushRun
    let senders: APNsSenders
    let statePath: String
    let logger: Logger
    var interval: Duration = .seconds(1)

    init(project: ProjectOptions, store: any RegistrationStore, logger: Logger) throws {
        let settings = try project.settings(developmentSigning: false, allowHTTP: false, jobs: nil)
        senders = APNsSenders(settings: settings, configuration: try APNsEnvironment.configuration(), logger: logger)
        run = PushRun(store: store, outputDirectory: project.output, senders: senders, logger: logger)
        statePath = BuildState.path(in: project.output)
        self.logger = logger
    }

    func run() async {
        var pushedBuild: String?
        while !Task.isCancelled {
            if let build = Self.identity(of: statePath), build != pushedBuild {
                do {
                    let report = try await run.run()
                    let summary = report.summary
                    if report.pending > 0 || !report.failures.isEmpty {
                        logger.info("push: sent \(summary.sent), succeeded \(summary.succeeded), removed tokens \(summary.tokensInvalid), retried \(summary.retries), failed \(summary.leftPending)")
                    }
                    for failure in report.failures { logger.error("push: \(failure)") }
                    if let stop = summary.stopReason { logger.error("push: \(stop.message)") }
                    pushedBuild = build
                } catch is PushLockBusy {
                    // `passforge push` (or another server) is pushing this build; look again later.
                } catch {
                    logger.error("push: \(error)")
                    pushedBuild = build
                }
            }
            try? await Task.sleep(for: interval)
        }
        await senders.shutdown()
    }

    /// Changes with every committed build (the state file is replaced by rename).
    static func identity(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_ino)-\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
}

/// The APNs connection settings from the environment (DESIGN.md "Command line").
enum APNsEnvironment {
    static func configuration() throws -> APNsConfiguration {
        let environment = ProcessInfo.processInfo.environment
        var configuration = APNsConfiguration(baseURL: environment["PASSFORGE_APNS_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? APNsConfiguration.productionURL)
        if let caPath = environment["PASSFORGE_APNS_CA_CERTIFICATE"], !caPath.isEmpty {
            guard let bytes = FileManager.default.contents(atPath: caPath) else {
                Console.error("error: PASSFORGE_APNS_CA_CERTIFICATE=\(caPath) cannot be read")
                throw ExitCode.failure
            }
            configuration.additionalTrustRootsPEM = Array(bytes)
        }
        return configuration
    }
}
