import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The threads of a process for work that blocks: an fsync, a file lock
/// waited for, a SQLite commit, a synchronous transport waiting for the
/// network. Such work must never hold one of the few threads of Swift's
/// cooperative pool, which serve every request and every task.
///
/// One pool per process, made by the command (`passforge serve`, `publish`,
/// `build`…) and passed to what needs it: at most `threadCount` threads, started
/// when first needed, so a burst of blocking work waits in line instead of
/// growing the process by a thread per call. It is also a task executor: a
/// task that prefers it (`Task(executorPreference:)`) runs its async work on
/// these threads, which a caller blocked on a cooperative thread cannot starve.
///
/// A job that blocks on another job of the same pool can deadlock it once all
/// threads wait: blocking work here waits only on the disk, the network, other
/// processes, or work that runs elsewhere.
package final class BlockingPool: TaskExecutor, Sendable {
    /// The default bound: blocking work is mostly waiting, so more threads than cores, but not unbounded.
    package static var defaultThreadCount: Int {
        max(4, min(64, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    package let threadCount: Int
    private let shared: Shared

    package init(threadCount: Int = BlockingPool.defaultThreadCount) {
        precondition(threadCount > 0, "a pool holds at least one thread")
        self.threadCount = threadCount
        shared = Shared()
    }

    deinit { shared.close() }

    /// Runs `work` on one of the pool's threads and returns its result.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work` on one of the pool's threads, without waiting for it.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        submit(work)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        submit { job.runSynchronously(on: executor) }
    }

    private func submit(_ work: @escaping @Sendable () -> Void) {
        if shared.append(work, threadLimit: threadCount) {
            let shared = shared
            Self.startThread { shared.work() }
        }
    }

    /// A detached POSIX thread: Foundation's `Thread` is not available to this low target.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        // Out of threads: run it here rather than lose the work (the caller waits for it anyway).
        guard started == 0 else {
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
            return
        }
        pthread_detach(thread)
    }
}

extension BlockingPool {
    /// The queue and its threads; the threads hold this, not the pool, so the pool's end lets them go.
    fileprivate final class Shared: Sendable {
        private struct State {
            var jobs: [@Sendable () -> Void] = []
            var head = 0
            var threads = 0
            var idle = 0
            var closed = false
        }

        private let state = Mutex(State())
        /// One signal per job queued for an idle thread, and one per thread at the close.
        private let wakeUp = DispatchSemaphore(value: 0)

        /// Queues `work`; true when the caller is to start a thread for it.
        func append(_ work: @escaping @Sendable () -> Void, threadLimit: Int) -> Bool {
            let (wakes, starts) = state.withLock { state -> (Bool, Bool) in
                state.jobs.append(work)
                if state.idle > 0 {
                    state.idle -= 1
                    return (true, false)
                }
                guard state.threads < threadLimit else { return (false, false) }
                state.threads += 1
                return (false, true)
            }
            if wakes { wakeUp.signal() }
            return starts
        }

        /// A thread's loop: the next job, or a wait for one, until the pool closes.
        func work() {
            while true {
                if let job = next() {
                    job()
                    continue
                }
                wakeUp.wait()
                if state.withLock({ $0.closed && $0.head == $0.jobs.count }) { return }
            }
        }

        /// The oldest job; nil marks this thread idle (it then waits for a signal).
        private func next() -> (@Sendable () -> Void)? {
            state.withLock { state in
                guard state.head < state.jobs.count else {
                    state.idle += 1
                    return nil
                }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.head = 0
                } else if state.head > 1024, state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
        }

        func close() {
            let threads = state.withLock { state in
                state.closed = true
                return state.threads
            }
            for _ in 0..<threads { wakeUp.signal() }
        }
    }
}
