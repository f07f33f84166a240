import Crypto
import Foundation
import Logging
import PassBuild

/// The output tree as the last committed build left it: the build state,
/// with lookups by pass and by download path, and the pass files' bytes.
///
/// A new build is picked up without a restart: at most every
/// `checkInterval`, `state.json` is stat'ed and reloaded when its inode,
/// size or mtime changed. The build renames whole files into place and
/// commits the state last, so whatever is read is a complete file; the ETag
/// sent is computed from the very bytes sent, so it can never describe
/// other bytes (DESIGN.md "Atomic writes").
public final class PublishedTree: @unchecked Sendable {
    /// A pass as the server needs it.
    public struct Pass: Sendable {
        public let record: BuildState.PassRecord
        /// SHA-256 of the authentication token; nil when the pass has none.
        public let tokenDigest: [UInt8]?
        /// The update tag's time, in whole seconds (HTTP dates have no more).
        public let lastModified: Int64
        /// `lastModified` as an HTTP date, made once per build.
        public let lastModifiedHTTPDate: String

        init(record: BuildState.PassRecord) {
            self.record = record
            tokenDigest = record.tokenHash.flatMap(PassAuthentication.digest(fromHex:))
            lastModified = record.updateTag >= 0 ? record.updateTag / 1000 : (record.updateTag - 999) / 1000
            lastModifiedHTTPDate = HTTPDate.format(lastModified)
        }
    }

    /// One loaded build state.
    public struct Snapshot: UpdateTags {
        public var passes: [String: Pass] = [:]
        /// `download/…` path → pass key.
        public var downloads: [String: String] = [:]
        public var builtAt: String = ""
        /// Token digests of passes a build removed, by key: a device may still unregister them.
        public var removedTokenDigests: [String: [UInt8]] = [:]

        public init() {}

        /// The lookups of one build state (for tools that hold a `BuildState` already).
        public init(state: BuildState) {
            self = PublishedTree.snapshot(of: state)
        }

        public func pass(type: some StringProtocol, serial: some StringProtocol) -> Pass? {
            passes["\(type)/\(serial)"]
        }

        /// The update tag of every built pass of one type, by serial.
        public func updateTag(type: String, serial: String) -> Int64? {
            passes["\(type)/\(serial)"]?.record.updateTag
        }
    }

    /// The bytes of a file, with the validators computed from them.
    public struct Representation: Sendable {
        public var bytes: [UInt8]
        /// `"` + first 128 bits of SHA-256, hex + `"`: the build's ETag formula.
        public var etag: String
    }

    public let outputDirectory: String
    public let checkInterval: Duration
    private let logger: Logger
    private let lock = NSLock()
    private var snapshot = Snapshot()
    private var stateIdentity: FileIdentity?
    private var lastCheck: ContinuousClock.Instant?
    private let cache: RepresentationCache

    public init(outputDirectory: String, checkInterval: Duration = .milliseconds(250), cacheBytes: Int = 64 << 20, logger: Logger) {
        self.outputDirectory = outputDirectory
        self.checkInterval = checkInterval
        self.logger = logger
        self.cache = RepresentationCache(budget: cacheBytes)
    }

    /// The current snapshot, reloading the state when a build committed a new one.
    public func current() -> Snapshot {
        let now = ContinuousClock.now
        return lock.withLock {
            if let lastCheck, now - lastCheck < checkInterval { return snapshot }
            lastCheck = now
            reloadIfChanged()
            return snapshot
        }
    }

    /// Reloads now, whatever the interval (after a mismatch between state and files).
    public func refresh() -> Snapshot {
        lock.withLock {
            lastCheck = ContinuousClock.now
            reloadIfChanged()
            return snapshot
        }
    }

    /// Reads a file of the tree by its path relative to the output folder.
    /// Nil when it is missing.
    public func representation(of relativePath: String) -> Representation? {
        let path = "\(outputDirectory)/\(relativePath)"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let identity = FileIdentity(info)
        if let cached = cache.get(identity) { return cached }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            done += count
        }
        let representation = Representation(bytes: bytes, etag: Self.etag(of: bytes))
        cache.put(identity, representation)
        return representation
    }

    /// The build's strong ETag of a file's bytes.
    public static func etag(of bytes: [UInt8]) -> String { BuildState.etag(of: bytes) }

    // MARK: Loading

    /// Called with `lock` held.
    private func reloadIfChanged() {
        let path = BuildState.path(in: outputDirectory)
        var info = stat()
        guard stat(path, &info) == 0 else {
            if stateIdentity != nil {
                logger.warning("\(path) is gone; serving no passes until a build writes it")
                snapshot = Snapshot()
                stateIdentity = nil
                cache.removeAll()
            }
            return
        }
        let identity = FileIdentity(info)
        guard identity != stateIdentity else { return }
        do {
            let state = try BuildState.load(from: outputDirectory)
            snapshot = Self.snapshot(of: state)
            stateIdentity = identity
            logger.info("build state loaded", metadata: ["passes": "\(snapshot.passes.count)", "builtAt": "\(state.builtAt)"])
        } catch {
            // Keep serving the previous build; the next check tries again.
            logger.error("cannot load the build state: \(error)")
        }
    }

    static func snapshot(of state: BuildState) -> Snapshot {
        var snapshot = Snapshot()
        snapshot.builtAt = state.builtAt
        for (key, record) in state.removedPasses {
            snapshot.removedTokenDigests[key] = PassAuthentication.digest(fromHex: record.tokenHash)
        }
        snapshot.passes.reserveCapacity(state.passes.count)
        for record in state.passes.values {
            let key = "\(record.passTypeIdentifier)/\(record.serialNumber)"
            snapshot.passes[key] = Pass(record: record)
            if !record.downloadPath.isEmpty { snapshot.downloads[record.downloadPath] = key }
            if let publicPath = record.publicDownloadPath, !publicPath.isEmpty { snapshot.downloads[publicPath] = key }
        }
        return snapshot
    }
}

/// What tells one version of a file from another: files are replaced by rename, never rewritten.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
    }
}

/// Recently served files by identity, bounded by total size. Hard links
/// (a pass and its download) share one entry.
final class RepresentationCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [FileIdentity: PublishedTree.Representation] = [:]
    private var order: [FileIdentity] = []
    private var total = 0
    private let budget: Int

    init(budget: Int) { self.budget = budget }

    func get(_ identity: FileIdentity) -> PublishedTree.Representation? {
        lock.withLock { entries[identity] }
    }

    func put(_ identity: FileIdentity, _ representation: PublishedTree.Representation) {
        let size = representation.bytes.count
        guard size <= budget / 4 else { return }
        lock.withLock {
            guard entries[identity] == nil else { return }
            // Oldest first out: a file replaced by a build is never asked for again.
            while total + size > budget, !order.isEmpty {
                let oldest = order.removeFirst()
                total -= entries.removeValue(forKey: oldest)?.bytes.count ?? 0
            }
            entries[identity] = representation
            order.append(identity)
            total += size
        }
    }

    func removeAll() {
        lock.withLock {
            entries.removeAll()
            order.removeAll()
            total = 0
        }
    }
}
