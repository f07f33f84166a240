package import Foundation
import NIOCore

/// One answer from APNs to one push.
package struct APNsResponse: Sendable, Equatable {
    /// The HTTP status: 200 for a push APNs accepted.
    package var status: Int
    /// The `reason` from APNs's JSON error body, e.g. `BadDeviceToken`.
    package var reason: String?
    /// For 410: when APNs last knew the token to be valid (the body's
    /// `timestamp`, milliseconds since 1970). Registrations older than this are stale.
    package var timestamp: Date?
    /// The `apns-id` header APNs gives every answer, for tracing with Apple.
    package var apnsID: String?

    package init(status: Int, reason: String? = nil, timestamp: Date? = nil, apnsID: String? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.apnsID = apnsID
    }

    /// Reads `{"reason": "...", "timestamp": 1700000000000}`; an empty or
    /// unreadable body gives no reason rather than an error, since the status
    /// alone still says what to do.
    init(status: Int, apnsID: String?, body: ByteBuffer) {
        self.init(status: status, apnsID: apnsID)
        guard body.readableBytes > 0,
            let decoded = try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView))
        else { return }
        reason = decoded.reason
        timestamp = decoded.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) }
    }

    private struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Double?
    }
}
