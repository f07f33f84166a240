import Synchronization

/// Runs items submitted concurrently in batches, one batch at a time: items
/// submitted while a batch runs wait, and make the next batch (at most
/// `maximumBatch` of them, oldest first). Each `submit` returns once the
/// batch holding its item is done, or throws the error of that batch only.
///
/// One costly step (an fsync, a directory sync) then serves many callers: a
/// burst of N items costs about N / `maximumBatch` steps instead of N.
package final class BatchingQueue<Item: Sendable>: Sendable {
    private struct Entry: Sendable {
        var item: Item
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var pending: [Entry] = []
        /// Whether a drainer runs; it stops only when `pending` is empty.
        var draining = false
    }

    package let maximumBatch: Int
    private let handler: @Sendable ([Item]) async throws -> Void
    private let state = Mutex(State())

    /// `handler` runs each batch in a task of its own, never two batches at once.
    package init(maximumBatch: Int, handler: @escaping @Sendable ([Item]) async throws -> Void) {
        precondition(maximumBatch > 0, "a batch holds at least one item")
        self.maximumBatch = maximumBatch
        self.handler = handler
    }

    /// For a `handler` that blocks (a commit that waits for fsync): it runs
    /// on a thread of `pool`, never holding one of the few threads of Swift's
    /// cooperative pool, which serve every request; still one batch at a time.
    package convenience init(
        maximumBatch: Int, pool: BlockingPool, blockingHandler: @escaping @Sendable ([Item]) throws -> Void
    ) {
        self.init(maximumBatch: maximumBatch) { batch in try await pool.run { try blockingHandler(batch) } }
    }

    /// Queues `item`; returns when the batch holding it was handled.
    package func submit(_ item: Item) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let startsDrainer = state.withLock { state in
                state.pending.append(Entry(item: item, continuation: continuation))
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startsDrainer {
                Task { await self.drain() }
            }
        }
    }

    /// Handles batches until nothing waits.
    private func drain() async {
        while let batch = nextBatch() {
            do {
                try await handler(batch.map(\.item))
                for entry in batch { entry.continuation.resume() }
            } catch {
                for entry in batch { entry.continuation.resume(throwing: error) }
            }
        }
    }

    /// The oldest waiting items; nil (and the drainer stops) when there are none.
    private func nextBatch() -> [Entry]? {
        state.withLock { state in
            guard !state.pending.isEmpty else {
                state.draining = false
                return nil
            }
            let batch = Array(state.pending.prefix(maximumBatch))
            state.pending.removeFirst(batch.count)
            return batch
        }
    }
}
