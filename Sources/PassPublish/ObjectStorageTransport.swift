import AtomicFiles
import ConcurrencySupport
import Foundation
import ObjectStorage
import PassModel
import Synchronization
import WalletTree

/// Publishing to `s3://BUCKET/PREFIX` on any S3-compatible store.
///
/// The bucket holds the tree's own layout under PREFIX. There are no links in
/// a bucket: every name of a pass (its file, token name, download links) is
/// an object of its own with the same bytes. A PUT replaces an object whole
/// (S3 is strongly read-after-write consistent), so a reader finds the old
/// bytes or the new ones, and a publish killed at any point leaves every
/// object whole. Nothing is ever listed: what to send and delete comes from
/// the build state at PREFIX, as for the other transports.
///
/// Each object gets its own `Content-Type` and `Cache-Control: no-cache`:
/// a CDN may keep a copy but must revalidate it with the store (by ETag)
/// before each use, so that a device is never handed an old pass after a
/// push (RFC 9111 §5.2.2.4; a plain `max-age` would let a cache serve a
/// stale pass, and Wallet only fetches again on the next push).
struct ObjectStorageTransport: PublishTransport {
    static let cacheControl = "no-cache"
    /// Where a publish notes what it will delete, for one killed before deleting it.
    static let removalsNotePath = "\(TreeLayout.stateFolder)/publish-removals.json"

    let bucket: String
    let prefix: String
    let concurrency: Int
    let environment: [String: String]
    let bridge: BlockingBridge
    let checkpoints: any Checkpoints
    private let connection: Connection

    /// The client, made when first needed and again after `close()` (a publisher may publish twice).
    var client: S3Client { connection.client() }

    init(
        bucket: String, prefix: String, environment: [String: String], pool: BlockingPool,
        checkpoints: any Checkpoints = NoCheckpoints()
    ) throws(PublishError) {
        let configuration: S3Configuration
        do {
            configuration = try S3Configuration(environment: environment)
        } catch {
            throw PublishError(.invalidDestination, "s3://\(bucket): \(error.description)")
        }
        let concurrency = environment["PASSFORGE_S3_CONCURRENCY"].flatMap(Int.init).map { min(max($0, 1), 256) } ?? 32
        (self.bucket, self.prefix, self.concurrency, self.environment) = (bucket, prefix, concurrency, environment)
        (bridge, self.checkpoints) = (BlockingBridge(pool: pool), checkpoints)
        connection = Connection(bridge: bridge) {
            S3Client(configuration: configuration, bucket: bucket, maximumConnections: concurrency)
        }
    }

    /// The open client, if any; its connections are closed by `close()`.
    private final class Connection: Sendable {
        private let make: @Sendable () -> S3Client
        private let bridge: BlockingBridge
        private let current = Mutex<S3Client?>(nil)

        init(bridge: BlockingBridge, make: @escaping @Sendable () -> S3Client) {
            (self.bridge, self.make) = (bridge, make)
        }

        func client() -> S3Client {
            current.withLock { client in
                if let client { return client }
                let made = make()
                client = made
                return made
            }
        }

        func close() {
            guard
                let client = current.withLock({ client in
                    defer { client = nil }
                    return client
                })
            else { return }
            _ = try? bridge.run { await client.shutdown() }
        }
    }

    /// The object key of a path of the tree.
    func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }

    var destination: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    func close() { connection.close() }

    // MARK: - State

    func fetchState() throws -> DestinationState {
        let (client, key) = (client, key)
        // All five at once: the state is the large one, and the lists come while it does. A missing state
        // means no build, whatever the lists.
        let names = [
            TreeLayout.statePath, TreeLayout.downloadsListPath, TreeLayout.bundleListPath, Self.removalsNotePath,
            LandingPageList.path,
        ]
        let files = try bridge.run { () async throws -> [[UInt8]?] in
            try await withThrowingTaskGroup(of: (Int, [UInt8]?).self) { group in
                for (index, name) in names.enumerated() {
                    let limit = index == 0 ? BuildState.maximumPublishedSize : BuildState.maximumPublishedListSize
                    group.addTask { (index, try await Self.read(client, key(name), limit: limit)) }
                }
                var result = [[UInt8]?](repeating: nil, count: names.count)
                for try await (index, bytes) in group { result[index] = bytes }
                return result
            }
        }
        guard let state = files[0] else { return .noState }
        let noted = files[3].flatMap { try? JSONDecoder().decode([String].self, from: Data($0)) } ?? []
        return .published(
            PublishedBuild(
                state: state, downloadsCSV: files[1], bundlesJSON: files[2],
                bundleFiles: noted.filter { $0.hasSuffix(".pkpasses") && TreePath.isBuildOwned($0) },
                landingPages: files[4], landingFiles: noted.filter(LandingComparison.isLandingFile)))
    }

    /// An object of at most `limit` bytes (a larger one is refused), or nil when there is none.
    private static func read(_ client: S3Client, _ key: String, limit: Int) async throws -> [UInt8]? {
        guard let object = try await client.get(key, limit: limit + 1) else { return nil }
        guard object.body.count <= limit else {
            throw PublishError(
                .tooLarge,
                "\(client.describe(key)) is more than the \(limit >> 20) MB a published build's "
                    + "\((key as NSString).lastPathComponent) may be; it is refused")
        }
        return object.body
    }

    /// A bucket has no folders to create.
    func createDestination() throws {}

    func lockDestination() throws -> (any DestinationLock)? {
        try ObjectStorageLock.acquire(
            client: client, key: key(ObjectStorageLock.path), destination: destination, bridge: bridge)
    }

    func uploadState(_ names: [String], from localRoot: String) throws {
        let (client, key) = (client, key)
        let files = try names.map { name -> (String, [UInt8]) in
            guard let bytes = AtomicFileSystem.readFile("\(localRoot)/\(name)") else {
                throw PublishError(.localTreeMismatch, "cannot read \(localRoot)/\(name); run passforge build first")
            }
            return (name, bytes)
        }
        // The lists at once (none names another), then the last, state.json: the one a server watches.
        try bridge.run {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, bytes) in files.dropLast() {
                    group.addTask {
                        _ = try await client.put(
                            key(name), body: bytes, contentType: Self.contentType(of: name), cacheControl: "no-store")
                    }
                }
                try await group.waitForAll()
            }
            if let (name, bytes) = files.last {
                _ = try await client.put(
                    key(name), body: bytes, contentType: Self.contentType(of: name), cacheControl: "no-store")
            }
        }
    }

    func noteRemovals(_ paths: [String]) throws {
        let (client, key) = (client, key)
        let bytes = Array(try JSONEncoder().encode(paths))
        try bridge.run {
            _ = try await client.put(
                key(Self.removalsNotePath), body: bytes, contentType: "application/json",
                cacheControl: "no-store")
        }
    }

    /// DeleteObjects, 1,000 keys a request, in order; then the note of removals.
    func remove(_ paths: [String], emptyFolders folders: [String]) throws {
        let (client, key) = (client, key)
        try bridge.run {
            try await client.deleteObjects(paths.map(key))
            try await client.delete(key(Self.removalsNotePath))
        }
    }

    /// The media type each name is served with (Apple: a pass is
    /// `application/vnd.apple.pkpass`, a bundle `application/vnd.apple.pkpasses`,
    /// an order `application/vnd.apple.finance.order`). A token name has no
    /// extension: it takes its item's type, from `itemPath`.
    static func contentType(of path: String, itemPath: String? = nil) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasSuffix(".pkpasses") { return "application/vnd.apple.pkpasses" }
        if name.hasSuffix(".pkpass") { return "application/vnd.apple.pkpass" }
        if name.hasSuffix(".order") { return "application/vnd.apple.finance.order" }
        if name.hasSuffix(".json") { return "application/json" }
        if name.hasSuffix(".csv") { return "text/csv; charset=utf-8" }
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".png") { return "image/png" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        let item = itemPath ?? path
        if item.hasPrefix("\(TreeLayout.itemFolder(.order))/") { return "application/vnd.apple.finance.order" }
        if item.hasPrefix("\(TreeLayout.itemFolder(.pass))/") { return "application/vnd.apple.pkpass" }
        return "application/octet-stream"
    }
}
