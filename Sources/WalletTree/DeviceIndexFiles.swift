package import AtomicFiles
package import ConcurrencySupport
import Foundation
package import PassModel
package import RegistrationStore
import Synchronization

/// The per-device index files of the output tree,
/// `v1/devices/<passTypeIdentifier>/<device>` (`TreeLayout.deviceIndexPath`): Apple's
/// SerialNumbers object, so that a static host answers "Get the List of
/// Updatable Passes" (Apple's "Wallet Passes" web service reference) too.
///
/// A static host cannot filter by `passesUpdatedSince`, so the file lists
/// every built pass the device holds, with `lastUpdated` the greatest of
/// their update tags; the device then makes conditional GETs.
///
/// Every file is replaced atomically: a temporary file in the same folder,
/// flushed (fsync), then renamed, and the folder flushed: a batch of changes
/// shares its folders' fsyncs, and never syncs the whole file system. Changes of one index may arrive in any order; each
/// carries the store's revision, and one older than the last written is
/// skipped. The methods block on the disk: call them off the cooperative
/// thread pool.
///
/// One per output folder and process, made by `OutputFolder` only: the record
/// of revisions written is this object's, so a second writer of the same
/// files would not see it.
package final class DeviceIndexFiles: Sendable {
    package let outputDirectory: String
    /// Writes of one device never overlap; these guard file operations, not a value.
    private let locks = (0..<64).map { _ in NSLock() }
    /// The last revision written of each index, by relative path.
    private let written = Mutex<[String: Int64]>([:])

    /// The threads of the blocking file work: the process's one `BlockingPool`, from the command.
    package let pool: BlockingPool
    /// This process's holders of each shard lock, so that a second one waits for the first without polling.
    let shardGate = ShardGate(count: Int(DeviceIndexFiles.shardCount))

    // Made by `OutputFolder` only, which passes the process's pool.
    init(outputDirectory: String, pool: BlockingPool) {
        self.outputDirectory = outputDirectory
        self.pool = pool
    }

    /// `v1/devices/<typeIdentifier>/<device>`: one index per device and pass or order type.
    package static func relativePath(device: String, passTypeIdentifier: String) -> String {
        TreeLayout.deviceIndexPath(device: device, type: passTypeIdentifier)
    }

    /// The file's bytes, or nil when none of `serialNumbers` is a built pass
    /// (then there is no file: nothing to list).
    package static func render(serialNumbers: [String], passTypeIdentifier: String, snapshot: some UpdateTags)
        -> [UInt8]?
    {
        var listed: [String] = []
        var lastUpdated = Int64.min
        var kind = WalletItemKind.pass
        for serial in serialNumbers.sorted() {
            guard let item = snapshot.updateTag(type: passTypeIdentifier, serial: serial) else { continue }
            listed.append(serial)
            lastUpdated = max(lastUpdated, item.tag)
            kind = item.kind
        }
        guard !listed.isEmpty else { return nil }
        return UpdatableItemsBody(kind: kind, identifiers: listed, lastUpdated: lastUpdated).encoded()
    }

    /// All 64 shard locks, in order: a build's refresh reads and writes the
    /// indices of many devices while no server writes any.
    package func lockAllShardsAcrossProcesses() async throws -> [FileLock] {
        try await lockShards(Array(0..<Self.shardCount))
    }

    /// The shard locks of these devices, in shard order (so that two holders
    /// of several shards cannot deadlock).
    package func lockShardsAcrossProcesses(devices: some Sequence<String>) async throws -> [FileLock] {
        try await lockShards(Set(devices.map(Self.shard(of:))).sorted())
    }

    /// Each shard: first this process's gate (a queue of waiting tasks, no thread held), then the
    /// file lock, waited for on the pool while another process (a build's refresh) holds it.
    private func lockShards(_ shards: [UInt32]) async throws -> [FileLock] {
        var locks: [FileLock] = []
        do {
            for shard in shards {
                try await shardGate.enter(Int(shard))
                do {
                    locks.append(try await fileLock(shard))
                } catch {
                    shardGate.leave(Int(shard))
                    throw error
                }
            }
        } catch {
            for lock in locks { lock.release() }
            throw error
        }
        return locks
    }

    /// The shard's file lock, for a caller through its gate; its release opens the gate.
    private func fileLock(_ shard: UInt32) async throws -> FileLock {
        let (path, gate) = (shardLockPath(shard), shardGate)
        let lock: FileLock
        if let free = try FileLock.acquire(path, blocking: false) {
            lock = free
        } else {
            // A blocking acquire returns a lock or throws.
            lock = try await pool.run { try FileLock.acquire(path, blocking: true)! }
        }
        return lock.onRelease { gate.leave(Int(shard)) }
    }

    package static let shardCount: UInt32 = 64

    /// FNV-1a of the device: the same shard in every process.
    package static func shard(of device: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in device.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash % shardCount
    }

    private func shardLockPath(_ shard: UInt32) -> String {
        TreeLayout.path("\(TreeLayout.indexLocksFolder)/\(shard)", in: outputDirectory)
    }

    /// Writes the indices many changes left, as durable as an atomic write of
    /// each (temporary file, fsync, rename, fsync of the folder): every new
    /// file is written and flushed (fsyncs waiting together, `syncFiles`)
    /// before any is renamed, and the renames are flushed with one fsync per
    /// folder before this returns. Changes older than the last written
    /// revision of their index are skipped.
    ///
    /// The files are staged and flushed on the pool without any lock; then the devices' shard locks are taken
    /// through this process's gate (`lockShardsAcrossProcesses`), so that at most one pool thread per shard
    /// blocks on a file lock held by another process. Blocking every pool thread there instead could leave
    /// this process's own lock holder without a thread to finish on: nothing would move again.
    package func applyAll<Tags: UpdateTags>(_ changes: [(change: RegistrationChange, snapshot: Tags)]) async throws {
        // Within the batch, only the newest change of each index matters.
        var newest: [String: (change: RegistrationChange, snapshot: Tags)] = [:]
        for item in changes {
            let relative = Self.relativePath(
                device: item.change.index.device, passTypeIdentifier: item.change.index.passTypeIdentifier)
            if let current = newest[relative], current.change.revision >= item.change.revision { continue }
            newest[relative] = item
        }
        let items = newest.map { relative, item in
            Pending(
                relative: relative, device: item.change.index.device, revision: item.change.revision,
                bytes: Self.render(
                    serialNumbers: item.change.index.serialNumbers,
                    passTypeIdentifier: item.change.index.passTypeIdentifier,
                    snapshot: item.snapshot))
        }
        guard !items.isEmpty else { return }
        let staged = try await pool.run { [self] in try stage(items) }
        do {
            let locks = try await lockShardsAcrossProcesses(devices: items.map(\.device))
            defer { for lock in locks { lock.release() } }
            try await pool.run { [self] in try install(staged) }
        } catch {
            for case (_, let temporary?) in staged.files { try? AtomicFileSystem.remove(temporary) }
            throw error
        }
    }

    /// Writes the given indices whatever was written before (a build's refresh), in one batch. The caller
    /// holds the shard locks of every device of `indices` (`lockShardsAcrossProcesses`).
    package func writeAll(_ indices: [DeviceIndex], snapshot: some UpdateTags) throws {
        try commit(indices.map { pending($0, snapshot: snapshot) })
    }

    private func pending(_ index: DeviceIndex, snapshot: some UpdateTags) -> Pending {
        Pending(
            relative: Self.relativePath(device: index.device, passTypeIdentifier: index.passTypeIdentifier),
            device: index.device,
            revision: nil,
            bytes: Self.render(
                serialNumbers: index.serialNumbers, passTypeIdentifier: index.passTypeIdentifier, snapshot: snapshot))
    }

    /// Rewrites the index of every device holding one of `passes` (keys
    /// `type/serial`), from the store's current registrations and `snapshot`:
    /// what a build does after it changed or removed those passes, so that
    /// `lastUpdated` and the lists of a static host follow the new build.
    /// Returns the number of indices written or removed.
    @discardableResult
    package func refresh(passes: some Sequence<String>, store: any RegistrationStore, snapshot: some UpdateTags)
        async throws -> Int
    {
        var serialsByType: [String: [String]] = [:]
        for key in passes {
            guard let (type, identifier) = ItemKey.split(key) else { continue }
            serialsByType[String(type), default: []].append(String(identifier))
        }
        // A server writing an index meanwhile could put back an older list:
        // read and write while no process writes any index.
        let locks = try await lockAllShardsAcrossProcesses()
        defer { for lock in locks { lock.release() } }
        // A tree of the layout before the per-type folders is migrated by its first refresh (or serve's start).
        try await pool.run { [self] in _ = try migrateLegacyLayoutLocked() }
        var count = 0
        for (type, serials) in serialsByType.sorted(by: { $0.key < $1.key }) {
            let indices = try await store.indices(holding: type, serialNumbers: serials)
            try await pool.run { [self] in
                try commit(indices.map { pending($0, snapshot: snapshot) })
            }
            count += indices.count
        }
        return count
    }

    // MARK: Batches

    private struct Pending {
        package var relative: String
        package var device: String
        /// Nil: write whatever was written before.
        package var revision: Int64?
        /// Nil: remove the file.
        package var bytes: [UInt8]?
    }

    /// Files written and flushed, not yet in place: `stage`'s result, for `install`.
    private struct Staged {
        var files: [(item: Pending, temporary: String?)]
        var folders: Set<String>
    }

    /// Stages, flushes and renames every file into place and flushes their folders, with the shard locks of
    /// every device held by the caller, so that no other writer interleaves with it.
    private func commit(_ items: [Pending]) throws {
        guard !items.isEmpty else { return }
        try install(try stage(items))
    }

    /// Writes every new file beside its index and flushes them all (fsyncs waiting together, `syncFiles`).
    private func stage(_ items: [Pending]) throws -> Staged {
        var staged = Staged(files: [], folders: [])
        do {
            for item in items {
                let path = TreeLayout.path(item.relative, in: outputDirectory)
                let folder = String(TreeLayout.parentFolder(of: path))
                if staged.folders.insert(folder).inserted { try createFolder(folder) }
                guard let bytes = item.bytes else {
                    staged.files.append((item, nil))
                    continue
                }
                let temporary = AtomicFileSystem.temporaryPath(for: path)
                staged.files.append((item, temporary))
                try lock(for: item.device).withLock {
                    try AtomicFileSystem.writeFile(bytes, to: temporary, sync: false)
                }
            }
            try AtomicFileSystem.syncFiles(staged.files.compactMap(\.temporary))
        } catch {
            for case (_, let temporary?) in staged.files { try? AtomicFileSystem.remove(temporary) }
            throw error
        }
        return staged
    }

    /// Renames the staged files into place (or removes emptied indices) and flushes their folders; a change
    /// older than the last written revision of its index is dropped. The caller holds the shard locks.
    private func install(_ staged: Staged) throws {
        var files = staged.files
        defer { for case (_, let temporary?) in files { try? AtomicFileSystem.remove(temporary) } }
        while let (item, temporary) = files.popLast() {
            try lock(for: item.device).withLock {
                guard item.revision.map({ claim(item.relative, revision: $0) }) ?? true else {
                    if let temporary { try? AtomicFileSystem.remove(temporary) }
                    return
                }
                if let temporary {
                    try AtomicFileSystem.rename(temporary, to: TreeLayout.path(item.relative, in: outputDirectory))
                } else {
                    try AtomicFileSystem.remove(TreeLayout.path(item.relative, in: outputDirectory))
                }
            }
        }
        // A registration is acknowledged only once its rename is on disk.
        for folder in staged.folders.sorted() { try AtomicFileSystem.syncDirectory(folder) }
    }

    /// Creates a type's folder of indices the first time, and flushes the folders above it, so that
    /// the new folder's name is on disk before any index in it is acknowledged.
    func createFolder(_ folder: String) throws {
        guard !AtomicFileSystem.isDirectory(folder) else { return }
        try AtomicFileSystem.createDirectory(folder)
        let devices = String(TreeLayout.parentFolder(of: folder))
        try AtomicFileSystem.syncDirectory(devices)
        try AtomicFileSystem.syncDirectory(String(TreeLayout.parentFolder(of: devices)))
    }

    // MARK: Helpers

    /// Records `revision` as written for `relative`, unless a newer one was. Call with the device's lock held.
    private func claim(_ relative: String, revision: Int64) -> Bool {
        written.withLock { written in
            if let last = written[relative], last >= revision { return false }
            // Bounded memory: the map matters only while writes of one index overlap.
            if written.count > 100_000 { written.removeAll(keepingCapacity: true) }
            written[relative] = revision
            return true
        }
    }

    private func lock(for device: String) -> NSLock {
        locks[Int(UInt(bitPattern: device.hashValue) % UInt(locks.count))]
    }
}

/// Apple's SerialNumbers object, `{"serialNumbers":[…],"lastUpdated":"…"}`, or for orders its
/// OrderIdentifiers object, `{"orderIdentifiers":[…],"lastModified":"…"}` ("Retrieve the
/// registrations for a device"). An order's `lastModified` is opaque to the device; it is the
/// same update tag a pass's `lastUpdated` is.
package struct UpdatableItemsBody: Sendable {
    package var kind: WalletItemKind
    package var identifiers: [String]
    package var lastUpdated: Int64

    package init(kind: WalletItemKind = .pass, identifiers: [String], lastUpdated: Int64) {
        (self.kind, self.identifiers, self.lastUpdated) = (kind, identifiers, lastUpdated)
    }

    package func encoded() -> [UInt8] {
        JSONValue.object(
            JSONObject([
                (kind.indexIdentifiersKey, .array(identifiers.map(JSONValue.string))),
                (kind.indexTagKey, .string(String(lastUpdated))),
            ])
        ).serialized()
    }
}

/// The update tag and kind of each built item: what an index lists and its `lastUpdated`.
package protocol UpdateTags: Sendable {
    func updateTag(type: String, serial: String) -> (tag: Int64, kind: WalletItemKind)?
}

extension BuildState: UpdateTags {
    package func updateTag(type: String, serial: String) -> (tag: Int64, kind: WalletItemKind)? {
        passes[ItemKey.text(typeIdentifier: type, identifier: serial)].map { ($0.updateTag, $0.kind) }
    }
}
