import Foundation

/// What the mock does with one request, scripted per token.
public indirect enum MockAPNsAnswer: Sendable, Equatable {
    /// Answers `status`; a `reason` is sent as APNs does, in `{"reason":"…"}`.
    /// Every answer carries an `apns-id` header.
    case status(Int, reason: String?)
    /// 410 `{"reason":"Unregistered","timestamp":<ms since 1970>}`.
    case unregistered(timestamp: Date)
    /// Sends GOAWAY (last stream = the highest stream seen on the connection,
    /// so streams already received are still answered), and refuses this
    /// request with RST_STREAM(REFUSED_STREAM): the client must retry it on a
    /// new connection. Streams opened after the GOAWAY are refused too.
    case goAway
    /// Closes the TCP connection at once, without TLS close_notify or GOAWAY,
    /// failing every stream on it.
    case dropConnection
    /// Waits, then gives `answer`.
    case delayed(Duration, MockAPNsAnswer)

    public static let ok = MockAPNsAnswer.status(200, reason: nil)
    public static let tooManyRequests = MockAPNsAnswer.status(429, reason: "TooManyRequests")
    public static let internalServerError = MockAPNsAnswer.status(500, reason: "InternalServerError")
    public static let serviceUnavailable = MockAPNsAnswer.status(503, reason: "ServiceUnavailable")
    public static let badDeviceToken = MockAPNsAnswer.status(400, reason: "BadDeviceToken")
}

/// What the mock actually did with a request it recorded.
public enum MockAPNsOutcome: Sendable, Equatable {
    /// A response with this status was written.
    case answered(status: Int)
    /// GOAWAY sent and this stream refused.
    case sentGoAway
    /// The connection was dropped.
    case droppedConnection
    /// The stream arrived after this connection's GOAWAY and was refused.
    case refusedAfterGoAway
    /// A delayed answer could not be given: the connection had gone.
    case lostWithConnection
}

/// One request as the mock saw it.
public struct MockAPNsRequest: Sendable {
    public var method: String
    public var path: String
    /// Regular headers in arrival order, names lowercased (HTTP/2 pseudo-headers excluded).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The token from `/3/device/<token>`, if the path has that shape.
    public var token: String?
    /// The client certificate's subject, e.g. `UID=…, CN=…, OU=…, O=…, C=US`.
    public var clientSubject: String?
    /// The same subject by field (`UID`, `CN`, `OU`, `O`, `C`…).
    public var clientSubjectFields: [String: String]
    /// 1 for the first TCP connection the mock accepted, 2 for the next…
    public var connection: Int
    /// The HTTP/2 stream ID (0 over HTTP/1.1).
    public var streamID: Int
    public var outcome: MockAPNsOutcome

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }
}
