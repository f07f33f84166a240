import ConcurrencySupport
import Dispatch
import Foundation
import PassPublish
import Synchronization

/// A publish run in this process that waits at one of its checkpoints (`PublishCheckpoint`) until the test
/// lets it go on: while it waits, the destination holds exactly what a publish killed there leaves.
final class PausedPublish: Checkpoints, @unchecked Sendable {
    private let point: String
    /// The thread the publish blocks (it waits at its checkpoint); not the publish's own pool, which its
    /// transport's async work needs meanwhile (`BlockingBridge`).
    private let runner = BlockingPool(threadCount: 1)
    private let goOn = DispatchSemaphore(value: 0)
    private let arrival = Mutex<(arrived: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    private var task: Task<PublishSummary, any Error>!

    init(output: String, destination: String, environment: [String: String], at point: String) throws {
        self.point = point
        let publisher = try Publisher(
            outputDirectory: output, destination: PublishDestination(parsing: destination),
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, pool: BlockingPool(),
            checkpoints: self)
        let runner = runner
        // The publish blocks its thread (and at the checkpoint): on the runner's, never a cooperative one.
        task = Task { try await runner.run { try publisher.publish() } }
    }

    func reached(_ point: String) {
        guard point == self.point else { return }
        let waiter = arrival.withLock { state in
            state.arrived = true
            return state.waiter
        }
        waiter?.resume()
        goOn.wait()
    }

    /// Returns once the publish waits at its point. If the publish fails before it, `finish` throws that.
    func reached() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = arrival.withLock { state in
                if !state.arrived { state.waiter = continuation }
                return state.arrived
            }
            if arrived { continuation.resume() }
        }
    }

    /// Lets the publish go on, and returns what it did.
    func finish() async throws -> PublishSummary {
        goOn.signal()
        return try await task.value
    }
}
