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

