import Synchronization

/// One gate per shard for the tasks of this process: `enter` waits, without
/// holding a thread, until the task before it `leave`s; waiters go in the
/// order they came. The file lock behind it keeps other processes out; this
/// keeps this process's own holders from polling it.
final class ShardGate: Sendable {
    private struct Shard {
        var isHeld = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let shards: Mutex<[Shard]>

    init(count: Int) {
        shards = Mutex(Array(repeating: Shard(), count: count))
    }

    /// Returns once the caller holds `shard`.
    func enter(_ shard: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = shards.withLock { shards in
                guard shards[shard].isHeld else {
                    shards[shard].isHeld = true
                    return true
                }
                shards[shard].waiters.append(continuation)
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Hands `shard` to the next waiter, or leaves it free.
    func leave(_ shard: Int) {
        let next = shards.withLock { shards -> CheckedContinuation<Void, Never>? in
            guard !shards[shard].waiters.isEmpty else {
                shards[shard].isHeld = false
                return nil
            }
            return shards[shard].waiters.removeFirst()
        }
        next?.resume()
    }
}
