import ConcurrencySupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

@testable import PassPublish

/// An in-process stand-in for an S3 store, for what the real one (SeaweedFS)
/// cannot be made to do: answer 5xx or 429 on demand, or 501 to a
/// conditional write as OpenStack Swift's s3api did. It keeps objects by
/// path and checks no signature; everything else runs against SeaweedFS.
final class FakeObjectStore: Sendable {
    struct State {
        var objects: [String: [UInt8]] = [:]
        /// Statuses for the next requests, one each, before normal service.
        var script: [Int] = []
        var conditionalWrites = true
        var requests: [String] = []
    }

    let state = Mutex(State())
    private(set) nonisolated(unsafe) var port = 0
    private nonisolated(unsafe) var task: Task<Void, any Error>?

    var endpoint: String { "http://127.0.0.1:\(port)" }

    static func start(conditionalWrites: Bool = true) async throws -> FakeObjectStore {
        let store = FakeObjectStore()
        store.state.withLock { $0.conditionalWrites = conditionalWrites }
        try await store.run()
        return store
    }

    private func run() async throws {
        let router = Router()
        for method in [HTTPRequest.Method.get, .head, .put, .delete] {
            router.on("**", method: method) { [self] request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                return answer(
                    method: method, path: request.uri.path, headers: request.headers,
                    body: Array(body.readableBytesView))
            }
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "fake-store", factory: { _ in SwiftLogNoOpLogHandler() }))
        // Off the cooperative threads: the tests block them while a publish's transport waits for this store.
        task = Task(executorPreference: Self.threads) { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    /// Threads of the store's own, apart from the publish's pool and the cooperative ones.
    private static let threads = BlockingPool(threadCount: 2)

    func shutdown() async {
        task?.cancel()
        _ = try? await task?.value
    }

    private static func etag(_ bytes: [UInt8]) -> String {
        "\"\(bytes.count)-\(bytes.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF_FFFF })\""
    }

    private func answer(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: [UInt8]) -> Response {
        state.withLock { state in
            state.requests.append("\(method) \(path)")
            if !state.script.isEmpty { return Response(status: .init(code: state.script.removeFirst())) }
            let existing = state.objects[path]
            let etag = existing.map(Self.etag)
            switch method {
            case .put:
                let ifNoneMatch = headers[.ifNoneMatch]
                let ifMatch = headers[.ifMatch]
                if (ifNoneMatch != nil || ifMatch != nil) && !state.conditionalWrites {
                    return Response(status: .init(code: 501))
                }
                if ifNoneMatch == "*", existing != nil { return Response(status: .preconditionFailed) }
                if let ifMatch, ifMatch != etag { return Response(status: .preconditionFailed) }
                state.objects[path] = body
                var fields = HTTPFields()
                fields[.eTag] = Self.etag(body)
                return Response(status: .ok, headers: fields)
            case .delete:
                state.objects[path] = nil
                return Response(status: .noContent)
            default:
                guard let existing, let etag else { return Response(status: .notFound) }
                var fields = HTTPFields()
                fields[.eTag] = etag
                return Response(
                    status: .ok, headers: fields,
                    body: method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: existing)))
            }
        }
    }
}
