import ConcurrencySupport
import Foundation
import ObjectStorage
import Synchronization
import Testing

@testable import PassPublish

/// Retries and the lock's fallback, against `FakeObjectStore` (a store that fails on demand).
@Suite struct ObjectStorageFailureTests {
    /// The threads the lock's synchronous calls wait on (the command's pool in real use).
    static let bridge = BlockingBridge(pool: BlockingPool(threadCount: 2))

    /// A fake store and a client of it, both shut down however `body` ends (a client must be).
    static func withStore(
        conditionalWrites: Bool = true, attempts: Int = 5,
        _ body: (FakeObjectStore, S3Client) async throws -> Void
    ) async throws {
        let store = try await FakeObjectStore.start(conditionalWrites: conditionalWrites)
        let client = S3Client(
            configuration: S3Configuration(
                credentials: S3Credentials(accessKeyID: "A", secretAccessKey: "S"),
                endpoint: try S3Endpoint(parsing: store.endpoint)),
            bucket: "b", retryPolicy: RetryPolicy(attempts: attempts, base: 0.001, cap: 0.01))
        do {
            try await body(store, client)
        } catch {
            await client.shutdown()
            await store.shutdown()
            throw error
        }
        await client.shutdown()
        await store.shutdown()
    }

    @Test func fiveHundredsAnd429AreTriedAgain() async throws {
        try await Self.withStore { store, client in
            store.state.withLock { $0.script = [503, 429, 500] }
            let outcome = try await client.put("k", body: [1, 2], contentType: "application/octet-stream")
            #expect(outcome != .conditionFailed)
            #expect(store.state.withLock { $0.requests.count } == 4)
            #expect(store.state.withLock { $0.objects["/b/k"] } == [1, 2])

            store.state.withLock { $0.script = [503, 503, 503, 503, 503] }
            let error = await #expect(throws: ObjectStorageError.self) { try await client.get("k") }
            #expect(error?.status == 503)
            #expect(error?.description.contains("GET s3://b/k: the store answered 503") == true)
            // 4xx other than 408/429 are not tried again.
            store.state.withLock {
                $0.script = [403]
                $0.requests = []
            }
            _ = await #expect(throws: ObjectStorageError.self) { try await client.get("k") }
            #expect(store.state.withLock { $0.requests.count } == 1)
        }
    }

    @Test func aLostConnectionIsTriedAgainThenExplained() async throws {
        try await Self.withStore(attempts: 3) { store, client in
            await store.shutdown()  // nothing listens on its port any more
            let error = await #expect(throws: ObjectStorageError.self) { try await client.head("k") }
            #expect(
                error?.description.contains("cannot reach the store at \(store.endpoint) after 3 attempts") == true,
                "\(String(describing: error))")
        }
    }

    static let lockKey = "p/.passforge/publish.lock"
    static let lockPath = "/b/\(lockKey)"

    @Test func theLockKeepsASecondPublishOutAndIsTakenOverFromADeadProcess() async throws {
        try await Self.withStore { store, client in
            let lock = try ObjectStorageLock.acquire(
                client: client, key: Self.lockKey, destination: "s3://b/p", bridge: Self.bridge)
            #expect(store.state.withLock { $0.objects[Self.lockPath] } != nil)
            let refused = #expect(throws: PublishError.self) {
                try ObjectStorageLock.acquire(
                    client: client, key: Self.lockKey, destination: "s3://b/p", bridge: Self.bridge)
            }
            #expect(refused?.description.contains("another passforge publish to s3://b/p is running") == true)
            lock.release()
            #expect(store.state.withLock { $0.objects[Self.lockPath] } == nil)

            // A lock left by a process of this machine that no longer runs is taken over.
            var dead = ObjectStorageLock.Holder.current()
            dead.pid = Int32.max - 7
            store.state.withLock { $0.objects[Self.lockPath] = dead.bytes }
            let taken = try ObjectStorageLock.acquire(
                client: client, key: Self.lockKey, destination: "s3://b/p", bridge: Self.bridge)
            let holder = store.state.withLock { $0.objects[Self.lockPath] }
            #expect(holder != nil && holder != dead.bytes)
            taken.release()
        }
    }

    /// A store that answers 501 to `If-None-Match: *` gets the check-then-put lock,
    /// which still keeps a second publish out.
    @Test func withoutConditionalWritesTheLockIsCheckedThenPut() async throws {
        try await Self.withStore(conditionalWrites: false) { store, client in
            let lock = try ObjectStorageLock.acquire(
                client: client, key: Self.lockKey, destination: "s3://b/p", bridge: Self.bridge)
            #expect(store.state.withLock { $0.objects[Self.lockPath] } != nil)
            #expect(store.state.withLock { $0.requests.contains("PUT \(Self.lockPath)") })
            #expect(throws: PublishError.self) {
                try ObjectStorageLock.acquire(
                    client: client, key: Self.lockKey, destination: "s3://b/p", bridge: Self.bridge)
            }
            lock.release()
            #expect(store.state.withLock { $0.objects[Self.lockPath] } == nil)
        }
    }
}
