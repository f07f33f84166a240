import AsyncHTTPClient
import Crypto
import DeviceCheck
import Foundation
import NIOSSL
import Synchronization
import TestSupport

/// A mock of Apple's DeviceCheck service and a real client that trusts it,
/// sharing one team key and one hand-turned clock.
public struct DeviceCheckRig: Sendable {
    public static let team = "ABCDE12345"
    public static let keyIdentifier = "KEY1234567"

    public let server: MockDeviceCheckServer
    package let client: DeviceCheckClient
    public let http: HTTPClient
    public let clock: ManualClock
    public let key: P256.Signing.PrivateKey

    /// Seconds since 1970, moved only by the test.
    public final class ManualClock: Sendable {
        private let seconds = Mutex<Int64>(Int64(Date().timeIntervalSince1970))
        public init() {}
        public func advance(by delta: Int64) { seconds.withLock { $0 += delta } }
        public var now: Int64 { seconds.withLock { $0 } }
    }

    /// - Parameter recordsRequests: keep every request for the test to read (the benchmark turns it off).
    package static func start(timeout: Duration = .seconds(10), recordsRequests: Bool = true) async throws
        -> DeviceCheckRig
    {
        let key = P256.Signing.PrivateKey()
        let credentials = try DeviceCheckCredentials(
            teamIdentifier: team, keyIdentifier: keyIdentifier, privateKeyPEM: key.pemRepresentation)
        let pki = TestPKI.shared
        let identity = pki.apnsServerCertificate()
        let clock = ManualClock()
        let server = try await MockDeviceCheckServer(
            certificateChainPEM: pki.pemBytes(identity.certificate), privateKeyPEM: pki.pemBytes(identity.key),
            teamIdentifier: team, keyIdentifier: keyIdentifier, publicKey: key.publicKey,
            recordsRequests: recordsRequests, now: { clock.now })
        let http = makeHTTPClient(trusting: pki.root)
        let client = DeviceCheckClient(
            endpoint: try DeviceCheckEndpoint(baseURL: server.baseURL),
            authorization: DeviceCheckAuthorization(credentials: credentials, now: { clock.now }),
            httpClient: http, timeout: timeout, now: { clock.now * 1000 })
        return DeviceCheckRig(server: server, client: client, http: http, clock: clock, key: key)
    }

    /// An HTTP client that trusts the test root (the mock's certificate).
    public static func makeHTTPClient(trusting rootPath: String) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(rootPath)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Runs `body` with a rig, and shuts it down however `body` ends: an HTTP
    /// client that is not shut down stops the whole test process.
    package static func with<T>(
        timeout: Duration = .seconds(10), recordsRequests: Bool = true,
        _ body: (DeviceCheckRig) async throws -> T
    ) async throws -> T {
        let rig = try await start(timeout: timeout, recordsRequests: recordsRequests)
        do {
            let result = try await body(rig)
            await rig.shutdown()
            return result
        } catch {
            await rig.shutdown()
            throw error
        }
    }

    public func shutdown() async {
        await client.shutdown()
        try? await http.shutdown()
        await server.shutdown()
    }
}
