import AtomicFiles
import Foundation
import Synchronization
import TestSupport
import Testing
import WalletTree

/// The device shard locks: a second holder waits for the first (in this process, in a queue of its
/// shard; held by another open file, as another process holds it, in flock on the pool) and gets the
/// lock once the first lets it go, never before.
@Suite struct DeviceIndexShardLockTests {
    final class Events: Sendable {
        private let list = Mutex<[String]>([])
        func note(_ event: String) { list.withLock { $0.append(event) } }
        var all: [String] { list.withLock { $0 } }
    }

    @Test func aSecondHolderInThisProcessWaitsForTheFirst() async throws {
        let folder = TemporaryDirectory("passforge-shards")
        let files = OutputFolder(directory: folder.path).indexFiles
        let events = Events()
        let first = try await files.lockShardsAcrossProcesses(devices: ["device-a"])
        let second = Task {
            let locks = try await files.lockShardsAcrossProcesses(devices: ["device-a"])
            events.note("second holds")
            for lock in locks { lock.release() }
        }
        events.note("first releases")
        for lock in first { lock.release() }
        try await second.value
        #expect(events.all == ["first releases", "second holds"])
        // The shard is free again: a third holder gets it at once.
        for lock in try await files.lockShardsAcrossProcesses(devices: ["device-a"]) { lock.release() }
    }

    @Test func aHolderWaitsForAnotherProcesssLock() async throws {
        let folder = TemporaryDirectory("passforge-shards")
        let files = OutputFolder(directory: folder.path).indexFiles
        let shard = DeviceIndexFiles.shard(of: "device-b")
        // Another open file of the lock, as another process (a build's refresh) would hold it.
        let path = "\(folder.path)/\(TreeLayout.indexLocksFolder)/\(shard)"
        let other = try #require(try FileLock.acquire(path, blocking: true))
        let events = Events()
        let waiting = Task {
            let locks = try await files.lockShardsAcrossProcesses(devices: ["device-b"])
            events.note("holder holds")
            for lock in locks { lock.release() }
        }
        events.note("other releases")
        other.release()
        try await waiting.value
        #expect(events.all == ["other releases", "holder holds"])
    }
}
