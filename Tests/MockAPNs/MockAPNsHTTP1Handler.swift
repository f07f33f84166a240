import NIOCore
import NIOHTTP1

/// Serves requests over HTTP/1.1, for the "server is not speaking HTTP/2" case:
/// answers `.status` scripts as they are and anything else with 200.
final class MockAPNsHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let connection: MockAPNsConnection
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(connection: MockAPNsConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            let prefix = "/3/device/"
            let token = head.uri.hasPrefix(prefix) ? String(head.uri.dropFirst(prefix.count)) : nil
            var status = 200
            if case .status(let scripted, _) = connection.state.nextAnswer(forToken: token) { status = scripted }
            connection.state.record(
                MockAPNsRequest(
                    method: head.method.rawValue,
                    path: head.uri,
                    headers: head.headers.map { ($0.name.lowercased(), $0.value) },
                    body: body,
                    token: token,
                    clientSubject: connection.clientSubject,
                    clientSubjectFields: connection.clientSubjectFields,
                    connection: connection.number,
                    streamID: 0,
                    outcome: .answered(status: status)
                ))
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "0")
            headers.add(name: "apns-id", value: connection.state.makeAPNsID())
            let response = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            self.head = nil
        }
    }
}
