package import Logging
package import RegistrationStore
package import WalletTree

/// Push runs wired for production — the one factory behind `passforge push`,
/// `build --push` and `serve --push`: a pool of APNs clients with the Pass
/// Type ID certificates the build signs with, over the store's push queue.
/// The clients stay connected between runs (Apple asks for long-lived
/// connections) until `shutdown()`.
package struct PushOperation: Sendable {
    package let pushRun: PushRun
    private let clients: APNsClientPool

    /// `output`: the process's one output tree (`OutputFolder`), shared with whatever else writes its index files.
    package init(
        output: OutputFolder, identities: any APNsIdentityProvider, store: any PushQueue,
        configuration: APNsConfiguration, logger: Logger = Logger(label: "passforge.push")
    ) {
        clients = APNsClientPool(identities: identities, configuration: configuration, logger: logger)
        pushRun = PushRun(store: store, output: output, senders: clients, logger: logger)
    }

    /// Queues the changes since the last push (or the one pass of `options`)
    /// and sends them; the clients stay open for the next run.
    package func run(
        _ options: PushRun.Options = PushRun.Options(), index: PublishedIndex? = nil,
        progress: @escaping @Sendable (PushRun.Progress) -> Void = { _ in }
    ) async throws -> PushRun.Report {
        try await pushRun.run(options, index: index, progress: progress)
    }

    /// One run, then the clients are closed, however the run ended.
    package func runOnce(
        _ options: PushRun.Options = PushRun.Options(), index: PublishedIndex? = nil,
        progress: @escaping @Sendable (PushRun.Progress) -> Void = { _ in }
    ) async throws -> PushRun.Report {
        do {
            let report = try await run(options, index: index, progress: progress)
            await shutdown()
            return report
        } catch {
            await shutdown()
            throw error
        }
    }

    /// Closes every APNs connection.
    package func shutdown() async { await clients.shutdown() }
}
