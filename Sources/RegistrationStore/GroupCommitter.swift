import Foundation
import GRDB

/// Runs concurrent writes in shared transactions: every write waiting while
/// a commit is in progress joins the next one. Each write has its own
/// savepoint, so one that fails is rolled back alone; a write returns only
/// after the transaction holding it committed (and, with
/// `synchronous = FULL`, reached the disk).
///
/// With one fsync per commit, a burst of N registrations costs about one
/// fsync instead of N.
final class GroupCommitter: @unchecked Sendable {
    private struct Pending {
        /// Runs the write inside the shared transaction and keeps its result.
        var apply: (Database) -> Void
        /// Hands the result (or the commit's error) to the caller.
        var finish: (Error?) -> Void
    }

    /// Large enough to share fsyncs, small enough to keep the writer lock short.
    static let maximumBatch = 256

    private let pool: DatabasePool
    private let queue = DispatchQueue(label: "passforge.registrations.group-commit")
    private let lock = NSLock()
    private var pending: [Pending] = []
    private var draining = false

    init(pool: DatabasePool) { self.pool = pool }

    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let slot = ResultSlot<T>()
            let item = Pending(
                apply: { db in
                    slot.result = Result {
                        var value: T?
                        try db.inSavepoint {
                            value = try work(db)
                            return .commit
                        }
                        return value!
                    }
                },
                finish: { commitError in
                    if let commitError {
                        continuation.resume(throwing: commitError)
                    } else {
                        continuation.resume(with: slot.result ?? .failure(CancellationError()))
                    }
                })
            enqueue(item)
        }
    }

    private func enqueue(_ item: Pending) {
        let start = lock.withLock { () -> Bool in
            pending.append(item)
            if draining { return false }
            draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Commits batches until nothing waits. Runs on `queue`, never on the
    /// cooperative thread pool: a commit blocks on fsync.
    private func drain() {
        while true {
            let batch = lock.withLock { () -> [Pending] in
                let count = min(pending.count, Self.maximumBatch)
                let batch = Array(pending.prefix(count))
                pending.removeFirst(count)
                if batch.isEmpty { draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try pool.write { db in
                    for item in batch { item.apply(db) }
                }
                for item in batch { item.finish(nil) }
            } catch {
                for item in batch { item.finish(error) }
            }
        }
    }
}

/// Written by the writer queue before `finish`, read by `finish`: never concurrently.
private final class ResultSlot<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}
