import AtomicFiles
import Logging
import PassBuild
import RegistrationStore
import ServiceLifecycle

/// `serve --push`: a service that watches the build state and runs a push
/// whenever a new build is committed (and once at start, to finish what an
/// earlier run left). One run at a time; the pushes of a build committed
/// during a run are merged into the next run's queue by the store.
///
/// On graceful shutdown it stops waiting, lets a run in progress finish (a
/// cancelled store write would be abandoned, and its deliveries pushed
/// again), and closes its APNs connections.
public struct PushOnNewBuild: Service {
    private let operation: PushOperation
    private let statePath: String
    private let logger: Logger
    private let interval: Duration

    public init(operation: PushOperation, outputDirectory: String, logger: Logger, interval: Duration = .seconds(1)) {
        self.operation = operation
        self.statePath = BuildState.path(in: outputDirectory)
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        var pushedBuild: FileIdentity?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // The state file is replaced by rename with every committed build.
            if let build = FileIdentity(path: statePath), build != pushedBuild {
                do {
                    let report = try await operation.run()
                    if report.pending > 0 || !report.failures.isEmpty {
                        logger.info("push: \(report.summaryLine)")
                    }
                    for failure in report.failures { logger.error("push: \(failure)") }
                    if let stop = report.summary.stopReason { logger.error("push: \(stop.message)") }
                    pushedBuild = build
                } catch is PushLockBusy {
                    // `passforge push` (or another server) is pushing this build; look again later.
                } catch {
                    logger.error("push: \(error)")
                    pushedBuild = build
                }
            }
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
        await operation.shutdown()
    }
}
