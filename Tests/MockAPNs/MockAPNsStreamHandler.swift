import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Handles one HTTP/2 stream as raw frames: collects the request, records it,
/// and gives the scripted answer.
final class MockAPNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: MockAPNsConnection
    private let streamID: Int
    private var requestHeaders = HPACKHeaders()
    private var body: [UInt8] = []
    private var complete = false

    init(connection: MockAPNsConnection, streamID: Int) {
        self.connection = connection
        self.streamID = streamID
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.streamOpened(streamID)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.streamClosed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if requestHeaders.isEmpty { requestHeaders = headers.headers }
            if headers.endStream { requestEnded(context: context) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data { body.append(contentsOf: buffer.readableBytesView) }
            if data.endStream { requestEnded(context: context) }
        default:
            break
        }
    }

    private func requestEnded(context: ChannelHandlerContext) {
        guard !complete else { return }
        complete = true
        if let last = connection.goAwayLastStreamID, streamID > last {
            record(.refusedAfterGoAway)
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            return
        }
        perform(connection.state.nextAnswer(forToken: token), context: context)
    }

    private func perform(_ answer: MockAPNsAnswer, context: ChannelHandlerContext) {
        switch answer {
        case .status(let status, let reason):
            respond(status: status, body: reason.map { #"{"reason":"\#($0)"}"# }, context: context)
        case .unregistered(let timestamp):
            let milliseconds = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
            respond(status: 410, body: #"{"reason":"Unregistered","timestamp":\#(milliseconds)}"#, context: context)
        case .goAway:
            connection.sendGoAway()
            record(.sentGoAway)
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
        case .dropConnection:
            record(.droppedConnection)
            connection.drop()
        case .delayed(let delay, let next):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: TimeAmount.nanoseconds(delay.nanoseconds)) {
                let (handler, context) = loopBound.value
                guard context.channel.isActive else {
                    handler.record(.lostWithConnection)
                    return
                }
                handler.perform(next, context: context)
            }
        }
    }

    private func respond(status: Int, body: String?, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        headers.reserveCapacity(4)
        headers.add(name: ":status", value: String(status))
        // Unique per answer: not worth a slot in the HPACK dynamic table.
        headers.add(name: "apns-id", value: connection.state.makeAPNsID(), indexing: .nonIndexable)
        record(.answered(status: status))
        guard let body else {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
            return
        }
        let buffer = context.channel.allocator.buffer(string: body)
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(buffer.readableBytes))
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
    }

    private var token: String? {
        guard let path = requestHeaders.first(name: ":path") else { return nil }
        let prefix = "/3/device/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }

    private func record(_ outcome: MockAPNsOutcome) {
        var headers: [(name: String, value: String)] = []
        if connection.state.recordsRequests {
            headers.reserveCapacity(requestHeaders.count)
            for (name, value, _) in requestHeaders where !name.hasPrefix(":") {
                headers.append((name.lowercased(), value))
            }
        }
        connection.state.record(
            MockAPNsRequest(
                method: requestHeaders.first(name: ":method") ?? "",
                path: requestHeaders.first(name: ":path") ?? "",
                headers: headers,
                body: body,
                token: token,
                clientSubject: connection.clientSubject,
                clientSubjectFields: connection.clientSubjectFields,
                connection: connection.number,
                streamID: streamID,
                outcome: outcome
            ))
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
