import AtomicFiles
import Foundation
import Hummingbird
package import PassContent
package import PassRender
import Synchronization
import WalletTree

/// `passforge preview --watch`: serves the gallery, rebuilds it when a
/// content file, template, image or passforge.yml changes, and tells open
/// pages to reload (server-sent events), as `hugo server` does.
package struct PreviewWatcher: Sendable {
    /// The build's pipeline without signing (`PassBuilder`, handed in by the command line).
    package var renderer: any UnsignedRenderer
    package var gallery: PreviewGallery
    /// Files and folders whose changes rebuild the gallery.
    package var watchedPaths: [String]
    package var host = "127.0.0.1"
    package var port = 8080
    /// How often modification times are compared.
    package var pollInterval: Duration = .milliseconds(100)

    package init(
        renderer: any UnsignedRenderer, gallery: PreviewGallery, watchedPaths: [String], host: String = "127.0.0.1",
        port: Int = 8080
    ) {
        self.renderer = renderer
        var gallery = gallery
        gallery.liveReload = true
        self.gallery = gallery
        self.watchedPaths = watchedPaths
        self.host = host
        self.port = port
    }

    /// What one rebuild did, for the terminal.
    package struct Rebuild: Sendable {
        package var changedPages: [String]
        package var errors: [ContentDiagnostic]
        package var passes: Int
    }

    /// Renders every pass and writes the pages that changed. While the
    /// content has errors, passes keep their last good rendering, and every
    /// page shows the errors.
    func rebuild(lastGood: inout [String: UnsignedPass], order: inout [String]) throws -> Rebuild {
        let rendering = renderer.renderWithoutSigning()
        let errors = rendering.errors
        if errors.isEmpty {
            lastGood = Dictionary(rendering.passes.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            order = rendering.passes.map(\.key)
        } else {
            for pass in rendering.passes {
                if lastGood.updateValue(pass, forKey: pass.key) == nil { order.append(pass.key) }
            }
        }
        let passes = order.compactMap { lastGood[$0] }
        let changed = try gallery.write(passes, errors: errors.isEmpty ? [] : rendering.diagnostics.filter(\.isError))
        return Rebuild(changedPages: changed, errors: errors, passes: passes.count)
    }

    /// Serves until the process is stopped: SIGINT or SIGTERM end it at once (there is nothing to flush,
    /// and open pages hold their event streams open, which a graceful shutdown would wait for). `onRebuild` reports
    /// each rebuild; `onServerRunning` the bound port.
    package func run(
        onServerRunning: @escaping @Sendable (Int) async -> Void, onRebuild: @escaping @Sendable (Rebuild) -> Void
    ) async throws {
        let hub = ReloadHub()
        var lastGood: [String: UnsignedPass] = [:]
        var order: [String] = []
        // Stamped before the first rendering, so that a change made while it runs is not missed.
        let initialStamps = stamps()
        onRebuild(try rebuild(lastGood: &lastGood, order: &order))
        let watcher = self
        let (initialGood, initialOrder) = (lastGood, order)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await Self.application(
                    directory: watcher.gallery.directory, host: watcher.host, port: watcher.port, hub: hub,
                    onServerRunning: onServerRunning
                ).runService(gracefulShutdownSignals: [])
            }
            group.addTask {
                var lastGood = initialGood
                var order = initialOrder
                var stamps = initialStamps
                while !Task.isCancelled {
                    try await Task.sleep(for: watcher.pollInterval)
                    let now = watcher.stamps()
                    guard now != stamps else { continue }
                    stamps = now
                    let result = try watcher.rebuild(lastGood: &lastGood, order: &order)
                    onRebuild(result)
                    if !result.changedPages.isEmpty {
                        hub.send(event: "reload", data: result.changedPages.joined(separator: "\n"))
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    static func application(
        directory: String, host: String, port: Int, hub: ReloadHub,
        onServerRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        let router = Router()
        let boundPort = BoundPort(port)
        // First, so that it sees every request, and every response (404s and 405s included).
        router.add(middleware: PreviewRequestGuard(rule: PreviewHostRule(boundHost: host), boundPort: boundPort))
        router.get("/_passforge/events") { _, _ -> Response in
            let stream = hub.subscribe()
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody(asyncSequence: stream))
        }
        router.get("/**") { request, _ -> Response in
            Self.file(request.uri.path, in: directory)
        }
        router.get("/") { _, _ -> Response in Self.file("/index.html", in: directory) }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "passforge-preview"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                boundPort.set(bound)
                await onServerRunning(bound)
            })
    }

    /// Path → stamp, of every file under the watched paths.
    func stamps() -> [String: String] {
        var stamps: [String: String] = [:]
        for root in watchedPaths {
            guard let kind = AtomicFileSystem.entryKind(root, followingLinks: true) else { continue }
            // Every file below, hidden ones too: any change there rebuilds. A folder's own stamp is not needed:
            // a file added or removed below it adds or removes a path.
            let files =
                kind == .directory
                ? (AtomicFileSystem.filesBelow(root, skippingHidden: false) ?? []).map { "\(root)/\($0)" } : [root]
            for file in files {
                // Size, inode and nanosecond times: an editor's save (often a new file renamed over the old) changes
                // one of them.
                if let stamp = FileStamp(path: file) { stamps[file] = stamp.description }
            }
        }
        return stamps
    }

    /// HTML, and the images and downloads of the landing pages copied into `_landing/` (an SVG badge shows only
    /// as `image/svg+xml`).
    static func contentType(of path: String) -> String {
        for (suffix, type) in [
            (".html", "text/html; charset=utf-8"), (".png", "image/png"), (".svg", "image/svg+xml"),
            (".pkpasses", "application/vnd.apple.pkpasses"), (".pkpass", "application/vnd.apple.pkpass"),
            (".order", "application/vnd.apple.finance.order"),
        ] where path.hasSuffix(suffix) {
            return type
        }
        return "application/octet-stream"
    }

    static func file(_ path: String, in directory: String) -> Response {
        let decoded = path.removingPercentEncoding ?? path
        let parts = decoded.split(separator: "/")
        guard !parts.contains(".."), !parts.contains(where: { $0.hasPrefix(".") }) else {
            return Response(status: .notFound)
        }
        let relative = parts.isEmpty ? "index.html" : parts.joined(separator: "/")
        guard let bytes = AtomicFileSystem.readFile("\(directory)/\(relative)") else {
            return Response(
                status: .notFound, body: ResponseBody(byteBuffer: ByteBuffer(string: "not found: \(relative)\n")))
        }
        var headers = HTTPFields()
        headers[.contentType] = Self.contentType(of: relative)
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The open pages' event streams; a rebuild sends to all of them.
final class ReloadHub: Sendable {
    private let continuations = Mutex<[UUID: AsyncStream<ByteBuffer>.Continuation]>([:])

    func subscribe() -> AsyncStream<ByteBuffer> {
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        continuations.withLock { $0[id] = continuation }
        // A comment first, so that the browser sees the stream open at once.
        continuation.yield(ByteBuffer(string: ": connected\n\n"))
        return stream
    }

    func send(event: String, data: String) {
        let lines = data.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)" }.joined(
            separator: "\n")
        let message = ByteBuffer(string: "event: \(event)\n\(lines)\n\n")
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(message) }
    }
}
