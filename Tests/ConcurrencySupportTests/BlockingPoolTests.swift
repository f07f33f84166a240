import ConcurrencySupport
import Dispatch
import Synchronization
import Testing

@Suite struct BlockingPoolTests {
    /// Counts the jobs running at once, and the most there ever were.
    final class Occupancy: Sendable {
        private let state = Mutex((now: 0, most: 0))
        /// The number running, this job included, and the most before it.
        func enter() -> (now: Int, mostBefore: Int) {
            state.withLock {
                let before = $0.most
                $0.now += 1
                $0.most = max($0.most, $0.now)
                return ($0.now, before)
            }
        }
        func leave() { state.withLock { $0.now -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    final class Order: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ name: String) { state.withLock { $0.append(name) } }
        var names: [String] { state.withLock { $0 } }
    }

    @Test func blockingJobsFillEveryThreadAndNeverMore() async throws {
        let pool = BlockingPool(threadCount: 3)
        let occupancy = Occupancy()
        // Until 3 ran at once, a job waits for a third to run beside it: the pool must run 3 at once. The
        // wait has a bound (10 s, a real timeout) only so that a pool of fewer threads fails, not hangs.
        let full = DispatchSemaphore(value: 0)
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<30 {
                group.addTask {
                    try await pool.run {
                        let (running, mostBefore) = occupancy.enter()
                        defer { occupancy.leave() }
                        if running == 3, mostBefore < 3 {
                            full.signal()
                            full.signal()
                        } else if mostBefore < 3 {
                            _ = full.wait(timeout: .now() + 10)
                        }
                        return index * 2
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == (0..<30).map { $0 * 2 })
        #expect(occupancy.most == 3)
    }

    @Test func aJobWaitsForAFreeThreadInsteadOfGrowingThePool() async throws {
        let pool = BlockingPool(threadCount: 1)
        let release = DispatchSemaphore(value: 0)
        let order = Order()
        var first: Task<Void, any Error>?
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            first = Task {
                try await pool.run {
                    started.resume()
                    release.wait()
                    order.append("first")
                }
            }
        }
        // The first job holds the only thread until released; the second is queued behind it.
        let second = Task { try await pool.run { order.append("second") } }
        release.signal()
        try await first?.value
        try await second.value
        #expect(order.names == ["first", "second"])
    }

    @Test func aTaskPreferringThePoolRunsOnItsThreads() async throws {
        let pool = BlockingPool(threadCount: 2)
        let value = try await Task(executorPreference: pool) { () async throws -> Int in
            let blocked = try await pool.run { 20 }
            return blocked + 22
        }.value
        #expect(value == 42)
    }

    @Test func aThrowingJobThrowsToItsCaller() async throws {
        struct Refused: Error {}
        let pool = BlockingPool(threadCount: 1)
        await #expect(throws: Refused.self) { try await pool.run { throw Refused() } }
        #expect(try await pool.run { "still running" } == "still running")
    }
}
