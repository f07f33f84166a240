package import Logging
import RegistrationStore
import ServiceLifecycle
package import WalletTree

/// `serve --push`: pushes the devices holding the passes of each new build
/// (and, at start, whatever an earlier run left pending). One run at a time;
/// the pushes of a build committed during a run are merged into the next
/// run's queue by the store. The APNs connections stay open between builds.
package struct PushOnNewBuild: NewBuildReaction {
    private let operation: PushOperation
    private let logger: Logger
    private let retryInterval: Duration
    private let onReport: @Sendable (PushRun.Report) -> Void

    /// `onReport` gets each finished run's report (the server's metrics count its answers).
    package init(
        operation: PushOperation, logger: Logger, retryInterval: Duration = .seconds(1),
        onReport: @escaping @Sendable (PushRun.Report) -> Void = { _ in }
    ) {
        self.operation = operation
        self.logger = logger
        self.retryInterval = retryInterval
        self.onReport = onReport
    }

    package func react(to build: PublishedIndex) async {
        while true {
            do {
                let report = try await operation.run(index: build)
                onReport(report)
                if report.pending > 0 || !report.failures.isEmpty {
                    logger.info("push: \(report.summaryLine)")
                }
                for failure in report.failures { logger.error("push: \(failure)") }
                if let stop = report.summary.stopReason { logger.error("push: \(stop.message)") }
                return
            } catch let error as RegistrationStoreError where error.code == .pushLockBusy {
                // `passforge push` (or another server) holds the push lock and may have
                // queued before this build: look again shortly, until the lock is free.
                guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
                try? await Task.sleep(for: retryInterval)
            } catch {
                logger.error("push: \(error)")
                return
            }
        }
    }

    package func shutdown() async { await operation.shutdown() }
}
