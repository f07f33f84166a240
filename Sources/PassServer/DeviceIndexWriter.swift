import AtomicFiles
import ConcurrencySupport
import RegistrationStore
import WalletTree

/// Concurrent index changes written in shared batches (`applyAll`), the way
/// `GroupCommitter` shares SQLite commits: a change returns once its file
/// (or a newer one of the same index) is on disk. `applyAll` runs the writes,
/// which block on file-system syncs, on the blocking pool.
final class DeviceIndexWriter: Sendable {
    private struct Item: Sendable {
        var change: RegistrationChange
        var snapshot: PublishedTree.Snapshot
    }

    static let maximumBatch = 512

    let files: DeviceIndexFiles
    private let queue: BatchingQueue<Item>

    init(files: DeviceIndexFiles) {
        self.files = files
        queue = BatchingQueue(maximumBatch: Self.maximumBatch) { batch in
            try await files.applyAll(batch.map { ($0.change, $0.snapshot) })
        }
    }

    func write(_ change: RegistrationChange, snapshot: PublishedTree.Snapshot) async throws {
        try await queue.submit(Item(change: change, snapshot: snapshot))
    }
}

/// The index writer of servers sharing one database (and one tree): what
/// this process saw may already be old, so each batch of changed indices is
/// read again from the database while holding the devices' shard locks,
/// which every process takes, and written from that read. The last writer
/// then always writes the newest state. Batches share their two file-system
/// syncs, as `DeviceIndexWriter`'s do.
final class SharedDeviceIndexWriter: Sendable {
    private struct Item: Sendable {
        var index: DeviceIndex
        var snapshot: PublishedTree.Snapshot
    }

    static let maximumBatch = 256

    let files: DeviceIndexFiles
    let store: any RegistrationStore
    private let queue: BatchingQueue<Item>

    init(files: DeviceIndexFiles, store: any RegistrationStore) {
        self.files = files
        self.store = store
        queue = BatchingQueue(maximumBatch: Self.maximumBatch) { batch in
            try await Self.write(batch, files: files, store: store)
        }
    }

    /// Returns once the device's index file reflects a read made after this call.
    func write(_ index: DeviceIndex, snapshot: PublishedTree.Snapshot) async throws {
        try await queue.submit(Item(index: index, snapshot: snapshot))
    }

    private static func write(_ batch: [Item], files: DeviceIndexFiles, store: any RegistrationStore) async throws {
        var keys: [(device: String, type: String)] = []
        var seen = Set<String>()
        for item in batch where seen.insert("\(item.index.device)/\(item.index.passTypeIdentifier)").inserted {
            keys.append((item.index.device, item.index.passTypeIdentifier))
        }
        let locks = try await files.lockShardsAcrossProcesses(devices: keys.map(\.device))
        defer { for lock in locks { lock.release() } }
        let fresh = try await store.indices(of: keys.map { (device: $0.device, passTypeIdentifier: $0.type) })
        let snapshot = batch[batch.count - 1].snapshot
        try await files.pool.run { try files.writeAll(fresh, snapshot: snapshot) }
    }
}
