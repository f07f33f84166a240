import AsyncHTTPClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
package import PassModel

/// Something that can deliver one push; `APNsClient` in production, a fake in tests.
package protocol APNsSending: Sendable {
    var endpoint: APNsEndpoint { get }
    /// The kind whose certificate the client presents (named in messages).
    var certificateKind: WalletItemKind { get }
    /// Sends one push and returns APNs's answer, whatever its status; throws for
    /// transport failures and for requests it refuses to make.
    func send(token: String, topic: String) async throws -> APNsResponse
}

extension APNsSending {
    package var certificateKind: WalletItemKind { .pass }
}

/// An HTTP/2 APNs client for one Pass Type ID (or Order Type ID) certificate.
///
/// It wraps one async-http-client `HTTPClient` whose pool keeps a single
/// long-lived HTTP/2 connection with many concurrent streams, as Apple asks
/// (Apple's "Sending notification requests to APNs": keep connections open
/// for hours, and honour the server's maximum of concurrent streams). How that is ensured, given how the pool works:
///
/// - The client runs on **one event loop**. AHC's HTTP/2 pool keeps at most one
///   connection per event loop for general requests; with several loops a
///   start-up burst can leave one connection per loop.
/// - A new pool starts as an HTTP/1 pool until the first connection negotiates
///   h2; for a burst it would start several connections in parallel. The HTTP/1
///   soft limit is 1 here, and `PushSender` sends the first push alone.
/// - Once on HTTP/2, requests beyond the streams the server allows wait in the
///   pool's queue for a free stream on the same connection (no extra
///   connection). That wait is bounded by the *connect* timeout (the request
///   then fails with `getConnectionFromPoolTimeout`) and the request's own
///   deadline is already running, so `PushSender` bounds the pushes in flight
///   (`APNsConfiguration.maxRequestsInFlight`).
/// - After a GOAWAY the pool lets the open streams finish, and opens one new
///   connection when requests are waiting. Streams the server refused fail and
///   are retried by `PushSender`.
/// - Connection attempts are not retried by the pool
///   (`retryConnectionEstablishment = false`): a refused connection fails the
///   request at once and `PushSender`'s own backoff decides, instead of the pool
///   retrying silently until the request times out.
/// - AHC flushes every request three times (HEADERS, DATA, END_STREAM); a
///   `FlushCoalescingHandler` on the connection merges the flushes of one
///   event-loop tick, which cut the CPU per push of push-benchmark by ~40%.
package final class APNsClient: APNsSending {
    package let endpoint: APNsEndpoint
    package let configuration: APNsConfiguration
    package let certificateKind: WalletItemKind

    private let http: HTTPClient
    /// AHC's own logging stays off: at trace level it prints request parts
    /// (with the full token in the path) and whole TLS configurations.
    private static let httpLogger = Logger(label: "passforge.apns.ahc", factory: { _ in SwiftLogNoOpLogHandler() })
    private let requestTimeout: TimeAmount
    /// Pass pushes carry an empty JSON object ("Adding a Web Service to Update
    /// Passes"); one shared buffer.
    private let body: ByteBuffer
    private let established = NIOLockedValueBox(0)

    /// - Throws: `APNsClientError.invalidConfiguration` or `.invalidIdentity`
    ///   with a message for people; never echoing key material.
    package init(
        identity: APNsClientIdentity,
        configuration: APNsConfiguration = APNsConfiguration()
    ) throws(APNsClientError) {
        self.endpoint = try APNsEndpoint(parsing: configuration.baseURL)
        self.configuration = configuration
        self.certificateKind = identity.kind
        self.requestTimeout = TimeAmount(configuration.requestTimeout)
        self.body = ByteBuffer(string: "{}")

        let tls = try Self.tlsConfiguration(identity: identity, configuration: configuration)
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        // AHC offers ALPN "h2" then "http/1.1" and always accepts HTTP/1; `send`
        // rejects any answer that is not HTTP/2 (APNs speaks only HTTP/2; an
        // HTTP/1 answer means something else is listening).
        http.httpVersion = .automatic
        http.redirectConfiguration = .disallow
        http.decompression = .disabled
        http.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.connectTimeout))
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: TimeAmount(configuration.idleTimeout),
            concurrentHTTP1ConnectionsPerHostSoftLimit: 1
        )
        pool.retryConnectionEstablishment = false
        http.connectionPool = pool
        // No distributed tracing: it costs per request and passforge has no tracer.
        http.tracing.tracer = nil
        // Called once per HTTP/2 connection that reached SETTINGS: counts them and
        // batches their writes (FlushCoalescingHandler).
        http.http2ConnectionDebugInitializer = { [established] channel in
            established.withLockedValue { $0 += 1 }
            return channel.eventLoop.submit {
                let pipeline = channel.pipeline.syncOperations
                // An optimisation only: without it the connection still works.
                if let http2 = try? pipeline.handler(type: NIOHTTP2Handler.self) {
                    try? pipeline.addHandler(FlushCoalescingHandler(), position: .before(http2))
                }
            }
        }
        self.http = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: http,
            backgroundActivityLogger: Self.httpLogger
        )
    }

    /// HTTP/2 connections established so far (a new one after each GOAWAY or drop).
    package var connectionsEstablished: Int { established.withLockedValue { $0 } }

    /// `POST {base}/3/device/{token}` with `apns-topic` (the pass type),
    /// `apns-push-type: background` and `apns-priority: 5`.
    package func send(token: String, topic: String) async throws -> APNsResponse {
        guard Self.isDeviceToken(token) else { throw APNsClientError.malformedToken(redacted(token: token)) }
        guard Self.isTopic(topic) else { throw APNsClientError.invalidTopic(topic) }

        var request = HTTPClientRequest(url: endpoint.baseURL + "/3/device/" + token)
        request.method = .POST
        request.headers.reserveCapacity(3)
        request.headers.add(name: "apns-topic", value: topic)
        // Passes get background pushes: the device then asks the web service for updates.
        request.headers.add(name: "apns-push-type", value: "background")
        // Background pushes must use priority 5; APNs rejects 10 for them.
        request.headers.add(name: "apns-priority", value: "5")
        request.body = .bytes(body)

        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: requestTimeout, logger: Self.httpLogger)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed && connectionsEstablished == 0 {
            throw APNsClientError.closedDuringSetup(endpoint: endpoint.description)
        }
        guard response.version.major == 2 else {
            throw APNsClientError.notHTTP2(endpoint: endpoint.description, version: "\(response.version)")
        }
        // APNs error bodies are tiny JSON objects; anything big is not APNs.
        let body = try await response.body.collect(upTo: 16 * 1024)
        return APNsResponse(
            status: Int(response.status.code), apnsID: response.headers.first(name: "apns-id"), body: body)
    }

    /// Closes the connection. Call once, after the last `send` returned.
    package func shutdown() async throws {
        try await http.shutdown()
    }

    // MARK: - Helpers

    private static func tlsConfiguration(
        identity: APNsClientIdentity,
        configuration: APNsConfiguration
    ) throws(APNsClientError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12  // APNs requires TLS 1.2 or later.
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(identity.certificateChainPEM)
        } catch {
            throw .invalidIdentity("The \(identity.kind.certificateName) is not a readable PEM certificate (chain).")
        }
        guard !chain.isEmpty else {
            throw .invalidIdentity("The \(identity.kind.certificateName) PEM holds no certificate.")
        }
        tls.certificateChain = chain.map { .certificate($0) }
        do {
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: identity.privateKeyPEM, format: .pem))
        } catch {
            throw .invalidIdentity(
                "The private key of the \(identity.kind.certificateName) is not a readable unencrypted PEM key.")
        }
        if let pem = configuration.additionalTrustRootsPEM {
            let roots = (try? NIOSSLCertificate.fromPEMBytes(pem)) ?? []
            guard !roots.isEmpty else {
                throw .invalidConfiguration("PASSFORGE_APNS_CA_CERTIFICATE holds no readable PEM certificate.")
            }
            tls.additionalTrustRoots = [.certificates(roots)]
        }
        // Building a context now checks that the key belongs to the certificate,
        // so a mismatch is reported here instead of as a failed handshake later.
        do {
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw .invalidIdentity(
                "The private key does not belong to the \(identity.kind.certificateName), or the TLS setup is invalid.")
        }
        return tls
    }

    /// APNs device tokens are hexadecimal (64 digits today; Apple says the length may change).
    static func isDeviceToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 200
            && token.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            }
    }

    /// A pass type identifier: printable ASCII without spaces.
    static func isTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 255 && topic.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

extension TimeAmount {
    /// The same span as a Swift `Duration`, to the nanosecond (saturating).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds =
            overflow ? Int64.max : product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        self = .nanoseconds(nanoseconds)
    }
}
