import AtomicFiles
import ConcurrencySupport
import Foundation
import PassModel
import RegistrationStore
import TestSupport
import Testing

@testable import WalletTree

/// The shard locks of the index files: this process's tasks queue at a gate (no thread held) before any
/// blocks a pool thread on the file lock, and a cancelled waiter leaves the queue.
@Suite struct ShardLockTests {
    struct Tags: UpdateTags {
        func updateTag(type: String, serial: String) -> (tag: Int64, kind: WalletItemKind)? { (7, .pass) }
    }

    /// `count` devices whose indices share one shard.
    static func devicesSharingAShard(_ count: Int) -> [String] {
        let shard = DeviceIndexFiles.shard(of: "device-0")
        return (0..<10_000).lazy.map { "device-\($0)" }.filter { DeviceIndexFiles.shard(of: $0) == shard }
            .prefix(count).map { $0 }
    }

    static func change(_ device: String, revision: Int64) -> (change: RegistrationChange, snapshot: Tags) {
        let index = DeviceIndex(device: device, passTypeIdentifier: "pass.a.b", serialNumbers: ["S-1"])
        return (RegistrationChange(outcome: .created, index: index, revision: revision), Tags())
    }

    /// Waits, without sleeping, until `count` tasks queue at the shard's gate.
    static func waitUntil(_ count: Int, waitAt shard: Int, of files: DeviceIndexFiles) async {
        while files.shardGate.waiting(shard) < count { await Task.yield() }
    }

    /// Issue 32: with every pool thread blocked on a shard's file lock, the lock's holder in this process
    /// could never get a thread to finish on. With one pool thread and a held shard, writers of three devices
    /// of that shard wait at the gate and the pool stays free; the old code blocked its only thread (this
    /// test then never ended: the time limit fails it).
    @Test(.timeLimit(.minutes(1))) func writersWaitingForAShardHoldNoPoolThread() async throws {
        let directory = TemporaryDirectory("passforge-shard-gate")
        let files = OutputFolder(directory: directory.path, pool: BlockingPool(threadCount: 1)).indexFiles
        let devices = Self.devicesSharingAShard(4)
        let shard = Int(DeviceIndexFiles.shard(of: devices[0]))
        let held = try await files.lockShardsAcrossProcesses(devices: [devices[0]])
        let writers = devices.dropFirst().enumerated().map { offset, device in
            Task { try await files.applyAll([Self.change(device, revision: Int64(offset + 1))]) }
        }
        await Self.waitUntil(3, waitAt: shard, of: files)
        #expect(try await files.pool.run { 42 } == 42, "the pool's one thread is free while writers wait")
        for file in held { file.release() }
        for writer in writers { try await writer.value }
        for device in devices.dropFirst() {
            let bytes = directory.read(TreeLayout.deviceIndexPath(device: device, type: "pass.a.b"))
            #expect(
                bytes.map { String(decoding: $0, as: UTF8.self) } == #"{"serialNumbers":["S-1"],"lastUpdated":"7"}"#)
        }
        #expect(files.shardGate.waiting(shard) == 0)
    }

    /// A task waiting for a shard honours its cancellation: it throws, leaves the queue, and the shard goes to
    /// the next task once released (not to the cancelled one).
    @Test(.timeLimit(.minutes(1))) func aCancelledWaiterLeavesTheQueue() async throws {
        let directory = TemporaryDirectory("passforge-shard-cancel")
        let files = OutputFolder(directory: directory.path, pool: BlockingPool(threadCount: 1)).indexFiles
        let devices = Self.devicesSharingAShard(2)
        let shard = Int(DeviceIndexFiles.shard(of: devices[0]))
        let held = try await files.lockShardsAcrossProcesses(devices: [devices[0]])
        let waiter = Task { try await files.applyAll([Self.change(devices[1], revision: 1)]) }
        await Self.waitUntil(1, waitAt: shard, of: files)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(files.shardGate.waiting(shard) == 0)
        #expect(directory.read(TreeLayout.deviceIndexPath(device: devices[1], type: "pass.a.b")) == nil)
        let folder = directory.file(
            String(TreeLayout.parentFolder(of: TreeLayout.deviceIndexPath(device: "d", type: "pass.a.b"))))
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] == [], "the staged file was removed")
        for file in held { file.release() }
        let again = try await files.lockShardsAcrossProcesses(devices: [devices[1]])
        #expect(again.count == 1)
        for file in again { file.release() }
    }

    /// A task cancelled before it reaches the gate never holds the shard.
    @Test func aTaskCancelledBeforeTheGateDoesNotEnter() async throws {
        let gate = ShardGate(count: 1)
        let entered = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.enter(0)
        }
        await #expect(throws: CancellationError.self) { try await entered.value }
        try await gate.enter(0)
        #expect(gate.waiting(0) == 0)
        gate.leave(0)
    }
}
