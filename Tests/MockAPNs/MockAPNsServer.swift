import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// An in-process APNs server for tests and benchmarks: HTTP/2 over TLS with
/// mutual authentication, on 127.0.0.1, answering each push from a per-token
/// script (swift-nio-http2 with NIOSSL's
/// `TLSConfiguration.makeServerConfigurationWithMTLS`).
public final class MockAPNsServer: Sendable {
    public enum WireProtocol: Sendable {
        /// ALPN h2 only, like APNs.
        case http2
        /// ALPN http/1.1 only: a server that is not APNs, to test the HTTP/2 check.
        case http1
    }

    public struct Configuration: Sendable {
        /// The server's certificate (for `127.0.0.1`/`localhost`) and chain, PEM.
        public var certificateChainPEM: [UInt8]
        /// The server's private key, unencrypted PEM.
        public var privateKeyPEM: [UInt8]
        /// The CA(s) client certificates must chain to; a client without a
        /// certificate, or with one from another CA, fails the handshake.
        public var trustRootsPEM: [UInt8]
        /// SETTINGS_MAX_CONCURRENT_STREAMS sent to clients.
        public var maxConcurrentStreams: Int
        public var wireProtocol: WireProtocol
        /// SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the client may use
        /// for its request headers (4096 like APNs, by default). Every push has a
        /// unique `:path`, so the table is always full; a small one makes debug
        /// builds of NIOHPACK, which scan it linearly, much faster.
        public var headerTableSize: Int
        /// Keep every request (headers, body…); the benchmark turns this off.
        public var recordsRequests: Bool

        public init(
            certificateChainPEM: [UInt8],
            privateKeyPEM: [UInt8],
            trustRootsPEM: [UInt8],
            maxConcurrentStreams: Int = 1000,
            wireProtocol: WireProtocol = .http2,
            headerTableSize: Int = 4096,
            recordsRequests: Bool = true
        ) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            self.trustRootsPEM = trustRootsPEM
            self.maxConcurrentStreams = maxConcurrentStreams
            self.wireProtocol = wireProtocol
            self.headerTableSize = headerTableSize
            self.recordsRequests = recordsRequests
        }
    }

    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    private let serverChannel: any Channel
    private let state: MockAPNsState

    /// The URL a client should use: `https://127.0.0.1:<port>`.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    private init(port: Int, serverChannel: any Channel, state: MockAPNsState) {
        self.port = port
        self.serverChannel = serverChannel
        self.state = state
    }

    /// Starts listening on 127.0.0.1 on a free port.
    public static func start(
        _ configuration: Configuration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> MockAPNsServer {
        var tls = TLSConfiguration.makeServerConfigurationWithMTLS(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(configuration.certificateChainPEM).map {
                .certificate($0)
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: configuration.privateKeyPEM, format: .pem)),
            trustRoots: .certificates(try NIOSSLCertificate.fromPEMBytes(configuration.trustRootsPEM))
        )
        tls.applicationProtocols = configuration.wireProtocol == .http2 ? ["h2"] : ["http/1.1"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let state = MockAPNsState(recordsRequests: configuration.recordsRequests)
        let settings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
            HTTP2Setting(parameter: .headerTableSize, value: configuration.headerTableSize),
            HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
        ]
        let serverProtocol = configuration.wireProtocol

        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = state.connectionAccepted(channel)
                    channel.closeFuture.whenComplete { _ in state.connectionClosed(channel) }
                    let closer = AbruptCloseHandler()
                    let connection = MockAPNsConnection(
                        number: number, channel: channel, state: state, abruptCloser: closer)
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(closer)
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    try sync.addHandler(
                        ApplicationProtocolNegotiationHandler { result, channel in
                            channel.eventLoop.makeCompletedFuture {
                                try Self.negotiated(
                                    result, channel: channel, connection: connection,
                                    wireProtocol: serverProtocol, settings: settings)
                            }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw MockAPNsError.noPort
        }
        return MockAPNsServer(port: port, serverChannel: channel, state: state)
    }

    /// After the handshake: note the client's certificate subject, then speak
    /// HTTP/2 (or HTTP/1.1 in `.http1` mode).
    private static func negotiated(
        _ result: ALPNResult,
        channel: any Channel,
        connection: MockAPNsConnection,
        wireProtocol serverProtocol: WireProtocol,
        settings: [HTTP2Setting]
    ) throws {
        let sync = channel.pipeline.syncOperations
        if let certificate = try sync.handler(type: NIOSSLServerHandler.self).peerCertificate {
            let fields = certificate.subjectName.map { (Self.label(for: $0.type), $0.value) }
            connection.clientSubject = fields.map { "\($0.0)=\($0.1)" }.joined(separator: ", ")
            connection.clientSubjectFields = Dictionary(fields, uniquingKeysWith: { first, _ in first })
        }
        switch (result, serverProtocol) {
        case (.negotiated("h2"), .http2):
            var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
            connectionConfiguration.initialSettings = settings
            _ = try sync.configureHTTP2Pipeline(
                mode: .server,
                connectionConfiguration: connectionConfiguration,
                streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    let streamID =
                        (try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { Int($0) } ?? 0
                    try stream.pipeline.syncOperations.addHandler(
                        MockAPNsStreamHandler(connection: connection, streamID: streamID)
                    )
                }
            }
        case (_, .http1):
            try sync.configureHTTPServerPipeline(withErrorHandling: true)
            try sync.addHandler(MockAPNsHTTP1Handler(connection: connection))
        default:
            // APNs speaks nothing but h2.
            channel.close(mode: .all, promise: nil)
        }
    }

    private static func label(for type: SSLCertificateNameType) -> String {
        switch type {
        case .userId: "UID"
        case .commonName: "CN"
        case .organizationalUnit: "OU"
        case .organization: "O"
        case .country: "C"
        case .state: "ST"
        case .city: "L"
        case .emailAddress: "emailAddress"
        default: "?"
        }
    }

    // MARK: - Script

    /// Queues answers for `token`: each request for it takes the next one; when
    /// none is left, the default answer (200) applies.
    public func enqueue(_ answers: [MockAPNsAnswer], forToken token: String) {
        state.enqueue(answers, forToken: token)
    }

    /// The answer for tokens without a scripted one; `.ok` unless changed.
    public func setDefaultAnswer(_ answer: MockAPNsAnswer) {
        state.setDefaultAnswer(answer)
    }

    // MARK: - Observations

    /// Every request recorded so far, in the order answered.
    public var requests: [MockAPNsRequest] { state.requests }
    /// Requests received so far (counted even when not recorded).
    public var requestCount: Int { state.requestCount }
    /// TCP connections accepted so far, including those that then failed the TLS handshake.
    public var connectionsAccepted: Int { state.connectionsAccepted }
    /// The most HTTP/2 streams that were open at once on any one connection.
    public var maxStreamsInFlight: Int { state.maxStreamsInFlight }

    /// Stops listening and closes every connection.
    public func shutdown() async throws {
        try? await serverChannel.close()
        for channel in state.openChannels {
            try? await channel.close()
        }
    }
}

public enum MockAPNsError: Error {
    case noPort
}
