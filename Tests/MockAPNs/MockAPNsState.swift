import NIOCore
import Synchronization

/// Everything the mock shares across connections: scripts, records, counters.
final class MockAPNsState: Sendable {
    private struct Inner {
        var scripts: [String: [MockAPNsAnswer]] = [:]
        var defaultAnswer: MockAPNsAnswer = .ok
        var requests: [MockAPNsRequest] = []
        var requestCount = 0
        var connectionsAccepted = 0
        var maxStreamsInFlight = 0
        var nextAPNsID: UInt64 = 0
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    private let inner = Mutex(Inner())
    let recordsRequests: Bool

    init(recordsRequests: Bool) {
        self.recordsRequests = recordsRequests
    }

    func enqueue(_ answers: [MockAPNsAnswer], forToken token: String) {
        inner.withLock { $0.scripts[token, default: []].append(contentsOf: answers) }
    }

    func setDefaultAnswer(_ answer: MockAPNsAnswer) {
        inner.withLock { $0.defaultAnswer = answer }
    }

    /// The next scripted answer for `token`, or the default one.
    func nextAnswer(forToken token: String?) -> MockAPNsAnswer {
        inner.withLock { inner in
            guard let token, var queue = inner.scripts[token], !queue.isEmpty else { return inner.defaultAnswer }
            let answer = queue.removeFirst()
            inner.scripts[token] = queue
            return answer
        }
    }

    func makeAPNsID() -> String {
        let number = inner.withLock { inner -> UInt64 in
            inner.nextAPNsID += 1
            return inner.nextAPNsID
        }
        // A UUID-shaped id, as APNs sends, without the cost of a random UUID.
        let hex = String(number, radix: 16, uppercase: true)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    func record(_ request: MockAPNsRequest) {
        inner.withLock { inner in
            inner.requestCount += 1
            if recordsRequests { inner.requests.append(request) }
        }
    }

    func connectionAccepted(_ channel: any Channel) -> Int {
        inner.withLock { inner in
            inner.connectionsAccepted += 1
            inner.channels[ObjectIdentifier(channel)] = channel
            return inner.connectionsAccepted
        }
    }

    func connectionClosed(_ channel: any Channel) {
        _ = inner.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func streamsInFlight(_ count: Int) {
        inner.withLock { $0.maxStreamsInFlight = max($0.maxStreamsInFlight, count) }
    }

    var requests: [MockAPNsRequest] { inner.withLock { $0.requests } }
    var requestCount: Int { inner.withLock { $0.requestCount } }
    var connectionsAccepted: Int { inner.withLock { $0.connectionsAccepted } }
    var maxStreamsInFlight: Int { inner.withLock { $0.maxStreamsInFlight } }
    var openChannels: [any Channel] { inner.withLock { Array($0.channels.values) } }
}

/// One accepted TCP connection. Confined to the connection's event loop (its
/// stream channels share it), which is why it can be `@unchecked Sendable`.
final class MockAPNsConnection: @unchecked Sendable {
    let number: Int
    let channel: any Channel
    let state: MockAPNsState
    var clientSubject: String?
    var clientSubjectFields: [String: String] = [:]
    private var openStreams = 0
    private var highestStreamID = 0
    private(set) var goAwayLastStreamID: Int?
    private let abruptCloser: AbruptCloseHandler

    init(number: Int, channel: any Channel, state: MockAPNsState, abruptCloser: AbruptCloseHandler) {
        self.number = number
        self.channel = channel
        self.state = state
        self.abruptCloser = abruptCloser
    }

    func streamOpened(_ streamID: Int) {
        channel.eventLoop.preconditionInEventLoop()
        openStreams += 1
        highestStreamID = max(highestStreamID, streamID)
        state.streamsInFlight(openStreams)
    }

    func streamClosed() {
        channel.eventLoop.preconditionInEventLoop()
        openStreams -= 1
        // After a GOAWAY, a server closes the connection once its last stream is done.
        if openStreams == 0, goAwayLastStreamID != nil {
            channel.close(mode: .all, promise: nil)
        }
    }

    /// Sends GOAWAY(lastStreamID: highest stream seen, NO_ERROR) once.
    /// Returns the last stream ID that will still be answered.
    @discardableResult
    func sendGoAway() -> Int {
        if let last = goAwayLastStreamID { return last }
        goAwayLastStreamID = highestStreamID
        let frame = HTTP2GoAway.frame(lastStreamID: highestStreamID)
        channel.pipeline.syncOperations.writeAndFlush(NIOAny(frame), promise: nil)
        return highestStreamID
    }

    /// Closes the socket under TLS: no close_notify, no GOAWAY.
    func drop() {
        abruptCloser.closeNow()
    }
}

/// Sits first in the pipeline, so a close issued from here reaches the socket
/// without passing through the TLS handler (which would send close_notify).
final class AbruptCloseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func closeNow() {
        context?.close(mode: .all, promise: nil)
    }
}
