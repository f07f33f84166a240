import ConcurrencySupport
import GRDB
import Synchronization

/// Runs concurrent writes in shared transactions: every write waiting while
/// a commit is in progress joins the next one. Each write has its own
/// savepoint, so one that fails is rolled back alone; a write returns only
/// after the transaction holding it committed (and, with
/// `synchronous = FULL`, reached the disk).
///
/// With one fsync per commit, a burst of N registrations costs about one
/// fsync instead of N. Commits run on the blocking pool, never on the
/// cooperative thread pool: a commit blocks on fsync.
final class GroupCommitter: Sendable {
    /// Large enough to share fsyncs, small enough to keep the writer lock short.
    static let maximumBatch = 256

    private let queue: BatchingQueue<any SavepointWrite>

    init(database: DatabasePool, blockingPool: BlockingPool) {
        queue = BatchingQueue(maximumBatch: Self.maximumBatch, pool: blockingPool) { batch in
            try database.write { db in
                for write in batch { write.apply(db) }
            }
        }
    }

    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let write = Write(work)
        try await queue.submit(write)
        return try write.result()
    }
}

/// One write of a shared transaction.
private protocol SavepointWrite: Sendable {
    /// Runs the write in a savepoint of its own and keeps its result (or error).
    func apply(_ db: Database)
}

private final class Write<T: Sendable>: SavepointWrite {
    private let work: @Sendable (Database) throws -> T
    private let outcome = Mutex<Result<T, any Error>?>(nil)

    init(_ work: @escaping @Sendable (Database) throws -> T) { self.work = work }

    func apply(_ db: Database) {
        let result = Result { () throws -> T in
            var value: T?
            try db.inSavepoint {
                value = try work(db)
                return .commit
            }
            return value!
        }
        outcome.withLock { $0 = result }
    }

    /// The write's result, once its transaction committed.
    func result() throws -> T {
        guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }
}
