import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with passforge's connection rules added
/// beneath it:
/// - a total deadline for reading one request, headers and body together
///   (the idle timeout restarts with every byte, so one byte every few
///   seconds would hold a connection forever);
/// - a response that says `Connection: close` (a 413, a malformed body, a
///   request that timed out) closes the connection once it is written;
/// - HTTP/1.0 is answered as HTTP/1.0 and, without keep-alive, closed
///   (RFC 9112 §9.3);
/// - a request that asks for a protocol upgrade (`Upgrade:` or
///   `Connection: upgrade`, or CONNECT) is answered with `Connection: close`
///   and the connection closed: see `ConnectionPersistenceHandler.endsParsing`;
/// - at most `ConnectionLimit.maximum` connections are open at once (see
///   `ConnectionLimit`): at the cap a new connection closes the oldest idle
///   or half-sent one, or, when every one is being answered, gets a 503.
///
/// Why a channel of its own, when routes, middleware and errors are Hummingbird's (`PassServer.router`):
/// each rule above acts below the responder, where Hummingbird 2 offers no hook. Its `HTTP1Channel`
/// has only an idle timeout (restarted by every byte), never sees a request it has not parsed (a 408 for
/// headers that never end, a 503 for a connection over the cap), cannot close a connection once a
/// response says `Connection: close` or after a request NIO's decoder stops parsing (`Upgrade`), and
/// answers HTTP/1.0 as 1.1. Everything a request's route decides stays in the router.
struct PassHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let requestReadTimeout: TimeAmount
    let connectionLimit: ConnectionLimit?

    var responder: HTTPChannelHandler.Responder { http1.responder }

    static func builder(
        idleTimeout: TimeAmount, requestReadTimeout: TimeAmount,
        connectionLimit: ConnectionLimit?
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            PassHTTP1Channel(
                http1: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout)),
                requestReadTimeout: requestReadTimeout, connectionLimit: connectionLimit)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        var tracked: ConnectionLimit.Connection?
        if let connectionLimit {
            tracked = connectionLimit.open(close: { channel.close(promise: nil) })
            if let tracked {
                channel.closeFuture.whenComplete { _ in connectionLimit.closed(tracked) }
            }
        }
        let persistence = ConnectionPersistenceHandler(
            requestReadTimeout: requestReadTimeout, tracked: tracked,
            logger: logger)
        do {
            if connectionLimit != nil, tracked == nil {
                // Every open connection is being answered: this one gets a 503 and nothing is read from it.
                try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler())
            }
            // First in the pipeline: it sees the raw bytes, before the HTTP decoder.
            try channel.pipeline.syncOperations.addHandler(RequestBytesHandler(persistence: persistence))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        // Still on the channel's event loop, where both handlers live.
        return http1.setup(channel: channel, logger: logger).assumeIsolated().flatMapThrowing { value in
            // Between NIO's HTTP/1 decoder and Hummingbird's conversion to HTTP types,
            // where the request's version and keep-alive are still known.
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(persistence, position: .after(decoder))
            return value
        }.nonisolated()
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

/// Thrown into a request's body stream when the request was not read in
/// time: answered 408, and logged as the client's fault.
struct RequestReadTimeout: Error, CustomStringConvertible {
    var description: String { "the request was not received within the time allowed" }
}

/// A connection over the cap while every other one is being answered: a
/// 503 (written below the HTTP handlers, as raw bytes), then closed; what
/// the client sends is never read.
final class RefusedConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let answer: String = {
        let body = #"{"error":"the server is at its connection limit; try again shortly"}"# + "\n"
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
            + "Retry-After: 5\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    }()

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: Self.answer)), promise: nil)
        context.close(promise: nil)
    }
}

/// Tells `ConnectionPersistenceHandler` when the bytes of a request start to arrive.
final class RequestBytesHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let persistence: ConnectionPersistenceHandler

    init(persistence: ConnectionPersistenceHandler) {
        self.persistence = persistence
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        persistence.requestBytesArrived()
        context.fireChannelRead(data)
    }
}

/// The request deadline, HTTP/1.0 and `Connection: close` (see `PassHTTP1Channel`).
final class ConnectionPersistenceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let requestReadTimeout: TimeAmount
    /// Told when a request is being answered (such a connection is not closed at the cap).
    private let tracked: ConnectionLimit.Connection?
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// From the first byte of a request to its end.
    private var deadline: Scheduled<Void>?
    private var headReceived = false
    private var responsesInProgress = 0
    /// Of the request being answered.
    private var isHTTP10 = false
    private var keepAlive = true
    private var closeAfterResponse = false

    init(requestReadTimeout: TimeAmount, tracked: ConnectionLimit.Connection? = nil, logger: Logger) {
        self.requestReadTimeout = requestReadTimeout
        self.tracked = tracked
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func requestBytesArrived() {
        guard deadline == nil, let context else { return }
        headReceived = false
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: requestReadTimeout) {
            [weak self] in
            self?.deadlinePassed()
        }
    }

    private func deadlinePassed() {
        deadline = nil
        guard let context else { return }
        if headReceived {
            // The responder is waiting for the body: it answers 408 and the connection closes.
            context.fireErrorCaught(RequestReadTimeout())
            return
        }
        logger.notice(
            "client error: request headers not received in time",
            metadata: ["client": "\(context.remoteAddress?.ipAddress ?? "unknown")"])
        if responsesInProgress == 0 {
            // The same answer as `APIError.requestTimeout`, written here: no request reached Hummingbird.
            let body = ByteBuffer(string: #"{"error":"request not received in time"}"# + "\n")
            var headers = HTTPHeaders()
            headers.add(name: "Connection", value: "close")
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Cache-Control", value: "no-store")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .requestTimeout, headers: headers))),
                promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            if deadline == nil { requestBytesArrived() }
            headReceived = true
            responsesInProgress += 1
            isHTTP10 = head.version.major == 1 && head.version.minor == 0
            keepAlive = head.isKeepAlive && !Self.endsParsing(head)
            if !keepAlive, !head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) {
                // Hummingbird ends the connection after the answer to a request that says so.
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body:
            context.fireChannelRead(data)
        case .end:
            deadline?.cancel()
            deadline = nil
            headReceived = false
            // Whole, and not answered yet: the server is at work on it.
            if responsesInProgress > 0 { tracked?.startAnswering() }
            context.fireChannelRead(data)
        }
    }

    /// Whether NIO's HTTP/1 decoder stops reading this connection after the
    /// request. llhttp marks a request as an upgrade when it has an `Upgrade`
    /// header and `upgrade` among its `Connection` tokens, or is a CONNECT
    /// (`llhttp__before_headers_complete` in NIO's CNIOLLHTTP/c_nio_http.c),
    /// and `HTTPDecoder` then stops parsing for good, expecting an upgrade
    /// handler to take the connection over (`stopParsing` in
    /// NIOHTTP1/HTTPDecoder.swift; a known NIO limitation, apple/swift-nio
    /// PR #2570). passforge upgrades to nothing: the next request on that
    /// connection would never be read, and would wait for the request
    /// deadline and a 408 (issue 24: one `Upgrade: h2c` through a proxy that
    /// reuses the connection stalls the next client). So such a request is
    /// answered like any other, with `Connection: close`, and the connection
    /// closes (RFC 9112 §9.6). Any `Upgrade` header or `upgrade` token counts,
    /// not only both together: closing a connection is always allowed, a
    /// connection left half-read never is.
    static func endsParsing(_ head: HTTPRequestHead) -> Bool {
        if head.method == .CONNECT || head.headers.contains(name: "upgrade") { return true }
        return head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            if isHTTP10 {
                head.version = .http1_0
                head.headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            } else if !keepAlive {
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            }
            closeAfterResponse = head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            responsesInProgress = max(0, responsesInProgress - 1)
            if responsesInProgress == 0 { tracked?.finishAnswering() }
            if closeAfterResponse {
                deadline?.cancel()
                deadline = nil
                context.writeAndFlush(data, promise: promise)
                context.close(promise: nil)
            } else {
                context.write(data, promise: promise)
            }
        }
    }
}
