import ConcurrencySupport
import Dispatch
import Synchronization

/// Runs async work (the S3 client's) from publish's synchronous transport
/// methods and waits for it, without holding Swift's cooperative threads:
/// the work runs on the threads of the command's `BlockingPool` through a
/// task executor preference, so a caller that itself sits on the cooperative
/// pool (an async command, a test) cannot starve the work it waits for,
/// however few cores there are. The caller must not be a thread of that pool.
struct BlockingBridge: Sendable {
    let pool: BlockingPool

    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: pool) {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// `run`, while the waiting thread tells `progress` the count the work
    /// reaches through `advance`, at most ten times a second and at the end:
    /// `progress` is called on the caller's thread only, never by the work.
    func run<T: Sendable>(
        progress: (Int) -> Void,
        _ body: @escaping @Sendable (_ advance: @escaping @Sendable (Int) -> Void) async throws -> T
    ) throws -> T {
        let box = ResultBox<T>()
        let count = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: pool) {
            do {
                box.result = .success(try await body { value in count.store(value, ordering: .relaxed) })
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        var told = 0
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            let value = count.load(ordering: .relaxed)
            if value != told {
                progress(value)
                told = value
            }
        }
        let value = count.load(ordering: .relaxed)
        if value != told { progress(value) }
        return try box.result!.get()
    }

    /// Starts work in the background on the same threads (the lock's refresh).
    func detached(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task(executorPreference: pool) { await body() }
    }
}

/// The result handed from the task to the waiting thread; the semaphore orders the write before the read.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
