import NIOConcurrencyHelpers
package import PassModel

/// Several `APNsClient`s for one topic and certificate, each with its own
/// long-lived HTTP/2 connection, sending each push over the one with the
/// fewest pushes in flight.
///
/// Apple allows this: "You can establish multiple connections to APNs servers
/// to improve performance. When you send a large number of remote
/// notifications, distribute them across connections to several server
/// endpoints" ("Sending notification requests to APNs"). One connection is
/// bounded by the streams the server allows at once and by the one event loop
/// its client runs on; each client here takes the next event loop of the
/// process's group, so the connections also spread over the cores.
///
/// Choosing the least busy client (not round robin) keeps each connection at or
/// under `APNsConfiguration.maxRequestsInFlight` while the sender keeps at most
/// `count × maxRequestsInFlight` pushes in flight, so no request waits in a
/// client's pool for a stream (which would run down its own deadline).
package final class APNsConnectionGroup: APNsSending {
    package let endpoint: APNsEndpoint
    package let certificateKind: WalletItemKind
    package let configuration: APNsConfiguration
    private let clients: [APNsClient]
    private let inFlight: NIOLockedValueBox<[Int]>

    /// - Parameter count: connections to open (at least 1); each opens on its first push.
    package init(identity: APNsClientIdentity, configuration: APNsConfiguration, count: Int) throws(APNsClientError) {
        var clients: [APNsClient] = []
        for _ in 0..<max(1, count) {
            clients.append(try APNsClient(identity: identity, configuration: configuration))
        }
        self.clients = clients
        self.endpoint = clients[0].endpoint
        self.certificateKind = identity.kind
        self.configuration = configuration
        self.inFlight = NIOLockedValueBox(Array(repeating: 0, count: clients.count))
    }

    /// The connections this group may open.
    package var count: Int { clients.count }

    /// The most pushes the group takes at once: each connection's bound, times the connections.
    package var maxInFlight: Int { configuration.maxRequestsInFlight * clients.count }

    /// HTTP/2 connections established so far, over all clients.
    package var connectionsEstablished: Int { clients.reduce(0) { $0 + $1.connectionsEstablished } }

    package func send(token: String, topic: String) async throws -> APNsResponse {
        let chosen = inFlight.withLockedValue { counts in
            // The first of the least busy: a lone push (the run's first) always opens connection 0.
            var best = 0
            for index in counts.indices where counts[index] < counts[best] { best = index }
            counts[best] += 1
            return best
        }
        defer { inFlight.withLockedValue { $0[chosen] -= 1 } }
        return try await clients[chosen].send(token: token, topic: topic)
    }

    /// Closes every connection. Call once, after the last `send` returned.
    package func shutdown() async throws {
        var firstError: (any Error)?
        for client in clients {
            do { try await client.shutdown() } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }
}
