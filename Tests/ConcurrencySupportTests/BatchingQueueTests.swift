import ConcurrencySupport
import Dispatch
import Glibc
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

    /// Lets a handler wait until the test opens it.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func wait() { semaphore.wait() }
        func open() { semaphore.signal() }
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

    @Test(arguments: [false, true]) func concurrentItemsAreEachHandledOnceWithinTheBatchBound(blocking: Bool) async throws {
        let recorder = Recorder()
        let queue: BatchingQueue<Int>
        if blocking {
            queue = BatchingQueue(maximumBatch: 10, pool: BlockingPool(threadCount: 2)) { batch in
                recorder.record(batch)
                usleep(2_000)
            }
        } else {
            queue = BatchingQueue(maximumBatch: 10) { batch in
                recorder.record(batch)
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in 0..<1_000 {
                group.addTask {
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

    @Test(arguments: [false, true]) func aFailingBatchFailsItsOwnItemsOnly(blocking: Bool) async throws {
        let gate = Gate()
        let handler: @Sendable ([Int]) throws -> Void = { batch in
            if batch == [0] { gate.wait() }
            if batch.contains(3) { throw Refused() }
        }
        let queue: BatchingQueue<Int>
        if blocking {
            queue = BatchingQueue(maximumBatch: 10, pool: BlockingPool(threadCount: 2), blockingHandler: handler)
        } else {
            queue = BatchingQueue(maximumBatch: 10) { batch in try handler(batch) }
        }
        // Item 0 holds the drainer while 1…5 queue up: they make the next batch, which fails.
        let first = Task { try await queue.submit(0) }
        try await Task.sleep(for: .milliseconds(50))
        let waiting = (1...5).map { item in Task { try await queue.submit(item) } }
        try await Task.sleep(for: .milliseconds(200))
        gate.open()
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
        func enter() { state.withLock { $0.running += 1; $0.peak = max($0.peak, $0.running) } }
        func leave() { state.withLock { $0.running -= 1 } }
        var peak: Int { state.withLock { $0.peak } }
    }

    struct Refused: Error {}

    @Test func resultsComeInTheSequencesOrder() async throws {
        let squares = try await (0..<100).concurrentMap(maximumConcurrency: 7) { number in
            try await Task.sleep(for: .microseconds((100 - number) * 10))
            return number * number
        }
        #expect(squares == (0..<100).map { $0 * $0 })
        #expect(try await [Int]().concurrentMap(maximumConcurrency: 3) { $0 }.isEmpty)
    }

    @Test(arguments: [1, 4, 16]) func neverRunsMoreThanTheBoundAtOnce(bound: Int) async throws {
        let gauge = Gauge()
        let results = try await (0..<200).concurrentMap(maximumConcurrency: bound) { number in
            gauge.enter()
            defer { gauge.leave() }
            try await Task.sleep(for: .milliseconds(1))
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
