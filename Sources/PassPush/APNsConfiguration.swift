/// Where and how the APNs client connects. The caller fills it from the
/// environment (`PASSFORGE_APNS_URL`, `PASSFORGE_APNS_CA_CERTIFICATE`).
package struct APNsConfiguration: Sendable {
    /// Apple's production host; Wallet passes only ever use production (there
    /// is no sandbox for pass type topics).
    package static let productionURL = "https://api.push.apple.com"
    /// HTTP/2 connections per topic unless configured: see README "Pushing updates".
    package static let defaultConnectionsPerTopic = 1

    /// `https://host[:port]`; the client posts to `{baseURL}/3/device/{token}`.
    package var baseURL: String
    /// Extra trusted CA certificates (PEM) on top of the system's, so tests can
    /// point the client at a mock whose certificate a test CA issued.
    package var additionalTrustRootsPEM: [UInt8]?
    /// The longest one push may take, from handing it to the connection pool to the end of its answer.
    package var requestTimeout: Duration
    /// The longest a TCP + TLS connection attempt may take.
    package var connectTimeout: Duration
    /// How long the connection may sit idle before it is closed. Apple asks for
    /// connections kept open for hours, as rapid connect/disconnect looks like an
    /// attack ("Sending notification requests to APNs"); async-http-client's
    /// default is only 60 s.
    package var idleTimeout: Duration
    package var retryPolicy: APNsRetryPolicy
    /// The most pushes on the wire at once. Keep it at or below the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS: async-http-client queues anything beyond
    /// the server's limit (on the same connection), but a queued request fails
    /// once it has waited `connectTimeout`, and its own timeout is running too.
    package var maxRequestsInFlight: Int
    /// HTTP/2 connections per topic (pass or order type), each with up to
    /// `maxRequestsInFlight` pushes at once (`APNsConnectionGroup`).
    package var connectionsPerTopic: Int

    package init(
        baseURL: String = APNsConfiguration.productionURL,
        additionalTrustRootsPEM: [UInt8]? = nil,
        requestTimeout: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(4 * 3600),
        retryPolicy: APNsRetryPolicy = .default,
        maxRequestsInFlight: Int = 100,
        connectionsPerTopic: Int = APNsConfiguration.defaultConnectionsPerTopic
    ) {
        self.baseURL = baseURL
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.retryPolicy = retryPolicy
        self.maxRequestsInFlight = max(1, maxRequestsInFlight)
        self.connectionsPerTopic = max(1, connectionsPerTopic)
    }
}

/// The APNs server a client talks to, parsed from `APNsConfiguration.baseURL`.
package struct APNsEndpoint: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int
    /// `https://host:port` with no trailing slash.
    package var baseURL: String

    package var description: String { "\(host):\(port)" }

    /// Accepts `https://host`, `https://host:port`, with an optional trailing slash.
    package init(parsing url: String) throws(APNsClientError) {
        let prefix = "https://"
        guard url.lowercased().hasPrefix(prefix) else {
            throw .invalidConfiguration(
                "The APNs URL must start with https:// (APNs only speaks HTTP/2 over TLS); got \"\(url)\".")
        }
        var rest = Substring(url.dropFirst(prefix.count))
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("@"), !rest.contains("#") else {
            throw .invalidConfiguration(
                "The APNs URL must be https://host or https://host:port, without a path; got \"\(url)\".")
        }
        var host = String(rest)
        var port = 443
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let parsed = Int(rest[rest.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw .invalidConfiguration("The APNs URL has an invalid port: \"\(url)\".")
            }
            port = parsed
            host = String(rest[..<colon])
        }
        guard !host.isEmpty else {
            throw .invalidConfiguration("The APNs URL has no host: \"\(url)\".")
        }
        self.host = host
        self.port = port
        self.baseURL = "https://\(host):\(port)"
    }
}
