import AtomicFiles
import Foundation
import PassBuild
import RegistrationStore

/// Concurrent index changes written in shared batches (`applyAll`), the way
/// `GroupCommitter` shares SQLite commits: a change returns once its file
/// (or a newer one of the same index) is on disk.
final class DeviceIndexWriter: @unchecked Sendable {
    private typealias Item = (change: RegistrationChange, snapshot: PublishedTree.Snapshot, done: @Sendable (Error?) -> Void)

    static let maximumBatch = 512

    let files: DeviceIndexFiles
    private let queue = DispatchQueue(label: "passforge.device-index-writer")
    private let lock = NSLock()
    private var pending: [Item] = []
    private var draining = false

    init(files: DeviceIndexFiles) { self.files = files }

    func write(_ change: RegistrationChange, snapshot: PublishedTree.Snapshot) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let start = lock.withLock { () -> Bool in
                pending.append((change, snapshot, { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }))
                if draining { return false }
                draining = true
                return true
            }
            if start { queue.async { self.drain() } }
        }
    }

    private func drain() {
        while true {
            let batch = lock.withLock { () -> [Item] in
                let count = min(pending.count, Self.maximumBatch)
                let batch = Array(pending.prefix(count))
                pending.removeFirst(count)
                if batch.isEmpty { draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try files.applyAll(batch.map { ($0.change, $0.snapshot) })
                for item in batch { item.done(nil) }
            } catch {
                for item in batch { item.done(error) }
            }
        }
    }
}


/// The index writer of servers sharing one database (and one tree): what
/// this process saw may already be old, so each batch of changed indices is
/// read again from the database while holding the devices' shard locks,
/// which every process takes, and written from that read. The last writer
/// then always writes the newest state. Batches share their two file-system
/// syncs, as `DeviceIndexWriter`'s do.
actor SharedDeviceIndexWriter {
    private struct Item {
        var index: DeviceIndex
        var snapshot: PublishedTree.Snapshot
        var continuation: CheckedContinuation<Void, Error>
    }

    static let maximumBatch = 256
    /// Index reads in flight at once, within the store's connection pool.
    static let concurrentReads = 8

    let files: DeviceIndexFiles
    let store: any RegistrationStore
    private var pending: [Item] = []
    private var draining = false

    init(files: DeviceIndexFiles, store: any RegistrationStore) {
        self.files = files
        self.store = store
    }

    /// Returns once the device's index file reflects a read made after this call.
    func write(_ index: DeviceIndex, snapshot: PublishedTree.Snapshot) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            pending.append(Item(index: index, snapshot: snapshot, continuation: continuation))
            if !draining {
                draining = true
                Task { await drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(Self.maximumBatch))
            pending.removeFirst(batch.count)
            do {
                try await write(batch)
                for item in batch { item.continuation.resume() }
            } catch {
                for item in batch { item.continuation.resume(throwing: error) }
            }
        }
        draining = false
    }

    private func write(_ batch: [Item]) async throws {
        var keys: [(device: String, type: String)] = []
        var seen = Set<String>()
        for item in batch where seen.insert("\(item.index.device)/\(item.index.passTypeIdentifier)").inserted {
            keys.append((item.index.device, item.index.passTypeIdentifier))
        }
        let locks = try await files.lockShardsAcrossProcesses(devices: keys.map(\.device))
        defer { for lock in locks { lock.release() } }
        let fresh = try await read(keys)
        let files = self.files
        let snapshot = batch[batch.count - 1].snapshot
        try await BlockingIO.run { try files.writeAll(fresh, snapshot: snapshot, shardLocksHeld: true) }
    }

    private func read(_ keys: [(device: String, type: String)]) async throws -> [DeviceIndex] {
        let store = self.store
        return try await withThrowingTaskGroup(of: DeviceIndex.self) { group in
            var iterator = keys.makeIterator()
            var indices: [DeviceIndex] = []
            for _ in 0..<Self.concurrentReads {
                guard let key = iterator.next() else { break }
                group.addTask { try await store.index(device: key.device, passTypeIdentifier: key.type) }
            }
            while let index = try await group.next() {
                indices.append(index)
                if let key = iterator.next() {
                    group.addTask { try await store.index(device: key.device, passTypeIdentifier: key.type) }
                }
            }
            return indices
        }
    }
}
