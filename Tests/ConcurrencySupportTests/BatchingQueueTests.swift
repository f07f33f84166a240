import ConcurrencySupport
import Dispatch
import Synchronization
import Testing

@Suite struct BatchingQueueTests {
    struct Refused: Error, Equatable {}

    /// Records the batches a handler saw.
    final class Recorder: Sendable {
        private let batches = Mutex<[[Int]]>([])
        func record(_ batch: [Int]) { batches.withLock { $0.append(batch) } }
        var seen: [[Int]] { batches.withLock { $0 } }
    }

    /// A count that tasks await (`reached`) instead of sleeping: the events of a test, in order.
    final class Countdown: Sendable {
        private typealias Waiter = (target: Int, continuation: CheckedContinuation<Void, Never>)
        private let state = Mutex((count: 0, waiters: [Waiter]()))

        func increment() {
            let ready = state.withLock { state in
                state.count += 1
                let ready = state.waiters.filter { $0.target <= state.count }
                state.waiters.removeAll { $0.target <= state.count }
                return ready
            }
            for waiter in ready { waiter.continuation.resume() }
        }

        /// Suspends until the count is at least `target`.
        func reached(_ target: Int) async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.count >= target { return true }
                    state.waiters.append((target, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }

        /// `reached` for a blocking handler, on a thread of its pool (never the cooperative pool's).
        func blockingReached(_ target: Int) {
            let done = DispatchSemaphore(value: 0)
            Task {
                await reached(target)
                done.signal()
            }
            done.wait()
        }
    }

    @Test func sequentialItemsAreHandledInOrderEachBeforeItsCallReturns() async throws {
        let recorder = Recorder()
        let queue = BatchingQueue<Int>(maximumBatch: 8) { batch in recorder.record(batch) }
        for item in 0..<20 {
            try await queue.submit(item)
            #expect(recorder.seen.last == [item])
        }
        #expect(recorder.seen == (0..<20).map { [$0] })
    }

    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func concurrentItemsAreEachHandledOnceWithinTheBatchBound(blocking: Bool) async throws {
        let recorder = Recorder()
        // The first batch is held until every item's task has started (and queued its item, in the same step):
        // the others wait meanwhile and must share batches.
        let started = Countdown()
        let queue: BatchingQueue<Int>
        if blocking {
            queue = BatchingQueue(maximumBatch: 10, pool: BlockingPool(threadCount: 2)) { batch in
                recorder.record(batch)
                started.blockingReached(1_000)
            }
        } else {
            queue = BatchingQueue(maximumBatch: 10) { batch in
                recorder.record(batch)
                await started.reached(1_000)
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in 0..<1_000 {
                group.addTask {
                    started.increment()
                    try await queue.submit(item)
                    // Returned only once its batch was handled.
                    #expect(recorder.seen.contains { $0.contains(item) })
                }
            }
            try await group.waitForAll()
        }
        let batches = recorder.seen
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<1_000))
        #expect(batches.allSatisfy { (1...10).contains($0.count) })
        // Items that waited shared batches.
        #expect(batches.count < 1_000)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func aFailingBatchFailsItsOwnItemsOnly(blocking: Bool) async throws {
        let (entered, opened, queued) = (Countdown(), Countdown(), Countdown())
        let queue: BatchingQueue<Int>
        if blocking {
            queue = BatchingQueue(maximumBatch: 10, pool: BlockingPool(threadCount: 2)) { batch in
                if batch == [0] {
                    entered.increment()
                    opened.blockingReached(1)
                }
                if batch.contains(3) { throw Refused() }
            }
        } else {
            queue = BatchingQueue(maximumBatch: 10) { batch in
                if batch == [0] {
                    entered.increment()
                    await opened.reached(1)
                }
                if batch.contains(3) { throw Refused() }
            }
        }
        // Item 0 holds the drainer while 1…5 queue up: they make the next batch, which fails. Each task counts
        // itself in the step that queues its item (submit queues before it first suspends).
        let first = Task { try await queue.submit(0) }
        await entered.reached(1)
        let waiting = (1...5).map { item in
            Task {
                queued.increment()
                try await queue.submit(item)
            }
        }
        await queued.reached(5)
        opened.increment()
        try await first.value
        for task in waiting {
            await #expect(throws: Refused.self) { try await task.value }
        }
        // The queue goes on.
        try await queue.submit(6)
    }
}

@Suite struct ConcurrentMapTests {
    /// Counts the calls running at once.
    final class Gauge: Sendable {
        private let state = Mutex((running: 0, peak: 0))
        func enter() {
            state.withLock {
                $0.running += 1
                $0.peak = max($0.peak, $0.running)
            }
        }
        func leave() { state.withLock { $0.running -= 1 } }
        var peak: Int { state.withLock { $0.peak } }
    }

    struct Refused: Error {}

    @Test func resultsComeInTheSequencesOrder() async throws {
        let squares = try await (0..<100).concurrentMap(maximumConcurrency: 7) { number in
            // Later numbers give way fewer times, so they tend to finish first: the order is the sequence's anyway.
            for _ in 0..<(100 - number) { await Task.yield() }
            return number * number
        }
        #expect(squares == (0..<100).map { $0 * $0 })
        #expect(try await [Int]().concurrentMap(maximumConcurrency: 3) { $0 }.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [1, 4, 16])
    func neverRunsMoreThanTheBoundAtOnce(bound: Int) async throws {
        let gauge = Gauge()
        // The first `bound` calls wait for one another, so that `bound` run at once (a map that ran fewer would
        // hang here, and the time limit fails it); the later ones pass straight through.
        let arrived = BatchingQueueTests.Countdown()
        let results = try await (0..<200).concurrentMap(maximumConcurrency: bound) { number in
            gauge.enter()
            defer { gauge.leave() }
            arrived.increment()
            await arrived.reached(bound)
            return number
        }
        #expect(results.count == 200)
        #expect(gauge.peak <= bound)
        #expect(gauge.peak == bound)
    }

    @Test func theFirstErrorIsThrown() async throws {
        await #expect(throws: Refused.self) {
            _ = try await (0..<50).concurrentMap(maximumConcurrency: 4) { number in
                if number == 20 { throw Refused() }
                return number
            }
        }
    }
}
