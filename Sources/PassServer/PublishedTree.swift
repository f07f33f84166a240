package import AtomicFiles
import ConcurrencySupport
import Crypto
import Foundation
package import Logging
package import NIOCore
package import PassModel
import Synchronization
package import WalletTree

/// The output tree as the last committed build left it: its index (`PublishedIndex`),
/// with lookups by pass and by download path, and the pass files' bytes.
///
/// A new build is picked up without a restart: `NewBuildWatcher` stats
/// `state.json` every interval and, when its stamp changed, parses it once
/// (on the process's `BlockingPool`, never Swift's cooperative pool), installs the
/// new snapshot with one swap, and hands the same index to the reactions
/// (index refresh, push). A request reads the installed snapshot and never
/// waits behind a parse; a file's bytes are read on the blocking pool too,
/// straight into the `ByteBuffer` the responses send.
///
/// The build renames whole files into place and commits the state last, so
/// whatever is read is a complete file; the ETag sent is computed from the
/// very bytes sent, so it can never describe other bytes.
package final class PublishedTree: Sendable {
    /// A pass or an order (`record.kind`) as the server needs it.
    package struct Item: Sendable {
        package let record: PublishedItem
        /// SHA-256 of the authentication token; nil when the pass has none.
        package let tokenDigest: [UInt8]?
        /// The update tag's time, in whole seconds (HTTP dates have no more).
        package let lastModified: Int64
        /// `lastModified` as an HTTP date, made once per build.
        package let lastModifiedHTTPDate: String

        init(record: PublishedItem) {
            self.record = record
            tokenDigest = record.tokenHash.flatMap(PassAuthentication.digest(fromHex:))
            lastModified = record.updateTag >= 0 ? record.updateTag / 1000 : (record.updateTag - 999) / 1000
            lastModifiedHTTPDate = HTTPDate.format(lastModified)
        }
    }

    /// One loaded build state: its index, with what requests look up in it made once.
    package struct Snapshot: UpdateTags {
        package var items: [ItemKey: Item] = [:]
        /// `download/…` path → item key.
        package var downloads: [String: ItemKey] = [:]
        package var builtAt: String = ""
        /// The update tag of the build (0 before the first).
        package var lastUpdateTag: Int64 = 0
        /// Kind and token digest of the items a build removed, by key: a device may still unregister them.
        package var removedItems: [ItemKey: (kind: WalletItemKind, digest: [UInt8]?)] = [:]
        /// The kind of each type identifier of the build (and of the items it removed): a type names
        /// passes or orders, never both, so a path's type tells its kind even when its item is unknown.
        package var typeKinds: [String: WalletItemKind] = [:]
        /// How many of `items` are orders.
        package var orderCount = 0
        package var passCount: Int { items.count - orderCount }

        package init() {}

        /// The lookups of one build's index (for tools that hold one already).
        package init(index: PublishedIndex) {
            self = PublishedTree.snapshot(of: index)
        }

        /// The key of `<type>/<identifier>`, when the build knows the type (a type names one kind).
        package func key(type: some StringProtocol, identifier: some StringProtocol) -> ItemKey? {
            typeKinds[String(type)].map {
                ItemKey(kind: $0, typeIdentifier: String(type), identifier: String(identifier))
            }
        }

        package func item(type: some StringProtocol, identifier: some StringProtocol) -> Item? {
            key(type: type, identifier: identifier).flatMap { items[$0] }
        }

        /// Kind and token digest of the removed item `<type>/<identifier>`.
        package func removedItem(type: some StringProtocol, identifier: some StringProtocol)
            -> (kind: WalletItemKind, digest: [UInt8]?)?
        {
            key(type: type, identifier: identifier).flatMap { removedItems[$0] }
        }

        /// The update tag and kind of every built item of one type, by identifier.
        package func updateTag(type: String, serial: String) -> (tag: Int64, kind: WalletItemKind)? {
            item(type: type, identifier: serial).map { ($0.record.updateTag, $0.record.kind) }
        }
    }

    /// The bytes of a file, with the validators computed from them.
    package struct Representation: Sendable {
        /// Read once into this buffer; every response (and the cache) shares its storage.
        package var bytes: ByteBuffer
        /// `"` + first 128 bits of SHA-256, hex + `"`: the build's ETag formula.
        package var etag: String
    }

    /// The process's one output tree: its paths, and the index writer every registration goes through.
    package let output: OutputFolder
    package var outputDirectory: String { output.directory }
    private let logger: Logger
    private let loaded = Mutex(Loaded())
    private let cache: RepresentationCache

    /// The index last installed, its snapshot, and the stamp of the file it came from.
    private struct Loaded {
        var snapshot = Snapshot()
        var index = PublishedIndex()
        var stateStamp: FileStamp?
    }

    package init(output: OutputFolder, cacheBytes: Int = 64 << 20, logger: Logger) {
        self.output = output
        self.logger = logger
        self.cache = RepresentationCache(budget: cacheBytes)
    }

    /// The snapshot of the last build installed. No file is read here.
    package func current() -> Snapshot {
        loaded.withLock { $0.snapshot }
    }

    /// The build's index last installed, with the stamp of its file (nil before any).
    package var installed: (stamp: FileStamp?, index: PublishedIndex) {
        loaded.withLock { ($0.stateStamp, $0.index) }
    }

    /// Stats `state.json` and, when it is not the file last installed, parses it and installs it.
    /// Blocks on the disk and the parse: for the watcher's thread and the server's start, never a request.
    package func reloadIfChanged() {
        let path = BuildState.path(in: outputDirectory)
        let installedStamp = loaded.withLock { $0.stateStamp }
        guard let stamp = FileStamp(path: path) else {
            if installedStamp != nil {
                logger.warning("\(path) is gone; serving no passes until a build writes it")
                loaded.withLock { $0 = Loaded() }
                cache.removeAll()
            }
            return
        }
        guard stamp != installedStamp else { return }
        do {
            let index = try PublishedIndex.load(from: outputDirectory)
            let snapshot = Self.snapshot(of: index)
            loaded.withLock { $0 = Loaded(snapshot: snapshot, index: index, stateStamp: stamp) }
            logger.info(
                "build state loaded",
                metadata: [
                    "passes": "\(snapshot.passCount)",
                    "orders": "\(snapshot.orderCount)", "builtAt": "\(index.builtAt)",
                ])
        } catch {
            // Keep serving the previous build; the next check tries again.
            logger.error("cannot load the build state: \(error)")
        }
    }

    /// Reads a file of the tree by its path relative to the output folder, on the blocking pool (as
    /// Hummingbird's file middleware does): the open, the stat and the read block on the disk.
    /// Nil when it is missing.
    package func representation(of relativePath: String) async throws -> Representation? {
        try await pool.run { [self] in representationBlocking(of: relativePath) }
    }

    /// `reloadIfChanged` on the blocking pool: for the watcher, which must not hold a cooperative thread.
    package func reloadOffTheCooperativePool() async {
        try? await pool.run { [self] in reloadIfChanged() }
    }

    /// The process's one pool for blocking work, which its output tree carries (from the command).
    private var pool: BlockingPool { output.indexFiles.pool }

    private func representationBlocking(of relativePath: String) -> Representation? {
        guard let file = RegularFile(openingForReading: output.path(relativePath)) else { return nil }
        if let cached = cache.get(file.stamp) { return cached }
        var bytes = ByteBufferAllocator().buffer(capacity: Int(file.stamp.size))
        let complete = bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: Int(file.stamp.size)) { free in
            file.readAll(into: UnsafeMutableRawBufferPointer(rebasing: free.prefix(Int(file.stamp.size))))
                ? Int(file.stamp.size) : 0
        }
        guard complete == Int(file.stamp.size) else { return nil }
        let representation = Representation(bytes: bytes, etag: Self.etag(of: bytes))
        cache.put(file.stamp, representation)
        return representation
    }

    /// The build's strong ETag of a file's bytes (`BuildState.etag`'s formula: the first 128 bits of
    /// its SHA-256, quoted), hashed where the bytes are.
    package static func etag(of bytes: ByteBuffer) -> String {
        let digest = bytes.withUnsafeReadableBytes { SHA256.hash(data: $0) }
        let hex = digest.prefix(16).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]], as: UTF8.self)
        }
        return "\"" + hex.joined() + "\""
    }

    // MARK: Loading

    static func snapshot(of index: PublishedIndex) -> Snapshot {
        var snapshot = Snapshot()
        snapshot.builtAt = index.builtAt
        snapshot.lastUpdateTag = index.lastUpdateTag
        for (key, removed) in index.removedItems {
            snapshot.removedItems[key] = (key.kind, PassAuthentication.digest(fromHex: removed.tokenHash))
            snapshot.typeKinds[key.typeIdentifier] = key.kind
        }
        snapshot.items.reserveCapacity(index.items.count)
        for (key, record) in index.items {
            snapshot.items[key] = Item(record: record)
            snapshot.typeKinds[key.typeIdentifier] = key.kind
            if !record.downloadPath.isEmpty { snapshot.downloads[record.downloadPath] = key }
            if let publicPath = record.publicDownloadPath, !publicPath.isEmpty { snapshot.downloads[publicPath] = key }
        }
        snapshot.orderCount = index.orderCount
        return snapshot
    }
}

/// Recently served files by identity, bounded by total size. Hard links
/// (a pass and its download) share one entry.
final class RepresentationCache: Sendable {
    private struct Entries {
        var byIdentity: [FileStamp: PublishedTree.Representation] = [:]
        var order: [FileStamp] = []
        var total = 0
    }

    private let entries = Mutex(Entries())
    private let budget: Int

    init(budget: Int) { self.budget = budget }

    func get(_ identity: FileStamp) -> PublishedTree.Representation? {
        entries.withLock { $0.byIdentity[identity] }
    }

    func put(_ identity: FileStamp, _ representation: PublishedTree.Representation) {
        let size = representation.bytes.readableBytes
        guard size <= budget / 4 else { return }
        entries.withLock { entries in
            guard entries.byIdentity[identity] == nil else { return }
            // Oldest first out: a file replaced by a build is never asked for again.
            while entries.total + size > budget, !entries.order.isEmpty {
                let oldest = entries.order.removeFirst()
                entries.total -= entries.byIdentity.removeValue(forKey: oldest)?.bytes.readableBytes ?? 0
            }
            entries.byIdentity[identity] = representation
            entries.order.append(identity)
            entries.total += size
        }
    }

    func removeAll() {
        entries.withLock { $0 = Entries() }
    }
}
