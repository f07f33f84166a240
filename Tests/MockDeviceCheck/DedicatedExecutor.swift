import Dispatch

/// A task executor on a serial dispatch queue of its own, outside Swift's
/// cooperative pool.
///
/// The test suite runs many tests at once on 2 cores, and some block a
/// cooperative thread for seconds (waiting for a process). A mock whose
/// handlers ran on that pool would then answer late, and a client's deadline
/// would fire for a reason the test is not about. The mock's server task
/// prefers this executor, so its connection handlers (child tasks) run here.
final class DedicatedExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
