import Synchronization

/// One gate per shard for the tasks of this process: `enter` waits, without
/// holding a thread, until the task before it `leave`s; waiters go in the
/// order they came. The file lock behind it keeps other processes out; this
/// keeps this process's own holders from polling it, and lets at most one
/// thread per shard block on it.
final class ShardGate: Sendable {
    private struct Waiter {
        var identifier: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Shard {
        var isHeld = false
        var waiters: [Waiter] = []
    }

    private struct State {
        var shards: [Shard]
        var nextIdentifier: UInt64 = 0
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(shards: Array(repeating: Shard(), count: count)))
    }

    /// Returns once the caller holds `shard`; throws `CancellationError` when the task is cancelled before
    /// (a cancelled waiter leaves the queue and never holds the shard).
    func enter(_ shard: Int) async throws {
        let identifier = state.withLock { state in
            defer { state.nextIdentifier += 1 }
            return state.nextIdentifier
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    guard !Task.isCancelled else { return .failure(CancellationError()) }
                    guard state.shards[shard].isHeld else {
                        state.shards[shard].isHeld = true
                        return .success(())
                    }
                    state.shards[shard].waiters.append(Waiter(identifier: identifier, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.shards[shard].waiters.firstIndex(where: { $0.identifier == identifier })
                else { return nil }
                return state.shards[shard].waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands `shard` to the next waiter, or leaves it free.
    func leave(_ shard: Int) {
        let next = state.withLock { state -> Waiter? in
            guard !state.shards[shard].waiters.isEmpty else {
                state.shards[shard].isHeld = false
                return nil
            }
            return state.shards[shard].waiters.removeFirst()
        }
        next?.continuation.resume()
    }

    /// The tasks waiting for `shard`, for tests.
    func waiting(_ shard: Int) -> Int { state.withLock { $0.shards[shard].waiters.count } }
}
