/// Why a DeviceCheck call did not give an answer, for people and for the
/// caller's decision (retry later, refuse the device's token, or fix the
/// configuration). Never holds a device token, the key or the JWT.
package struct DeviceCheckError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// 400 "Bad Device Token": the app sent a token Apple does not accept.
        case badDeviceToken
        /// 400 "Bad Bits", "Bad Timestamp", "Bad Payload": a request passforge made wrongly.
        case badRequest
        /// 400 "Bad Authorization Token", 401 "Invalid Authorization Token" or
        /// "Authorization Token Expired", 403 "Forbidden": the team, key ID or
        /// .p8 key is wrong, or the key lacks DeviceCheck.
        case authorization
        /// 429 "Too Many Requests".
        case rateLimited
        /// 500, 503 and other 5xx: Apple cannot answer now.
        case unavailable
        /// No answer in time, or the connection failed.
        case transport
        /// A key or setting that cannot be used.
        case configuration
        /// An answer outside Apple's table (405, an unknown status, a query answer that is not two bits).
        case unexpected
    }

    package var kind: Kind
    /// The HTTP status, when Apple answered.
    package var status: Int?
    package var message: String

    package init(_ kind: Kind, status: Int? = nil, _ message: String) {
        self.kind = kind
        self.status = status
        self.message = message
    }

    /// Worth trying again later with the same claim: Apple was busy or out of reach.
    package var isTemporary: Bool { kind == .rateLimited || kind == .unavailable || kind == .transport }

    package var description: String {
        status.map { "DeviceCheck answered \($0): \(message)" } ?? "DeviceCheck: \(message)"
    }

    /// Apple's table of answers ("Accessing and modifying per-device data"),
    /// keyed by status; the body is only a hint (Apple's descriptive strings and
    /// the live ones differ), so it is shown cut to one short line.
    package static func answer(status: Int, body: String) -> DeviceCheckError {
        let hint = String(
            body.unicodeScalars.prefix(120).map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        let said = hint.isEmpty ? "" : " (\"\(hint)\")"
        switch status {
        case 400:
            let lowered = body.lowercased()
            if lowered.contains("device token") {
                return DeviceCheckError(
                    .badDeviceToken, status: status,
                    "Bad Device Token\(said): the app's DCDevice token is malformed or not from this team's app")
            }
            if lowered.contains("authorization") {
                return DeviceCheckError(
                    .authorization, status: status,
                    "Bad Authorization Token\(said): check deviceCheck.teamIdentifier, keyIdentifier and the .p8 key")
            }
            return DeviceCheckError(
                .badRequest, status: status,
                "Bad Request\(said): Apple refused the request's bits, timestamp or payload")
        case 401:
            return DeviceCheckError(
                .authorization, status: status,
                "Invalid or expired authorization token\(said): check deviceCheck.teamIdentifier, keyIdentifier and that the .p8 key has DeviceCheck enabled"
            )
        case 403:
            return DeviceCheckError(
                .authorization, status: status,
                "Forbidden\(said): the key is not allowed to use DeviceCheck for this team")
        case 405:
            return DeviceCheckError(.unexpected, status: status, "Method Not Allowed\(said): check deviceCheck.baseURL")
        case 429:
            return DeviceCheckError(.rateLimited, status: status, "Too Many Requests: try again later")
        case 500...599:
            return DeviceCheckError(
                .unavailable, status: status, "Apple's DeviceCheck service is unavailable\(said); try again later")
        default:
            return DeviceCheckError(.unexpected, status: status, "unexpected answer\(said)")
        }
    }
}

extension DeviceCheckError {
    /// passforge's key, team or key ID is wrong (Apple answered 401, 403 or "Bad Authorization Token"), or the
    /// key cannot sign: no request succeeds until an operator fixes it, so it is not a reason to retry.
    package var isMisconfiguration: Bool { kind == .authorization || kind == .configuration }

    /// Apple certainly changed nothing: it refused the call with a 4xx, or the call was never sent. A 5xx,
    /// a lost connection or an answer outside Apple's table may have come after the change was made.
    package var leftBitsUnchanged: Bool {
        if let status { return (400..<500).contains(status) }
        return kind != .transport && kind != .unexpected
    }
}
