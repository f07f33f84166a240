import Foundation
import MockAPNs
import PassPush
import Synchronization
import TestSupport

let topic = TestPKI.passType

/// A 64-digit hexadecimal device token, distinct for each `number`.
func token(_ number: Int) -> String {
    let hex = String(number, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
}

func notifications(_ count: Int) -> [PushNotification] {
    (0..<count).map { PushNotification(token: token($0), topic: topic) }
}

/// The test Pass Type ID certificate (leaf + WWDR) as an APNs client identity.
func passTypeIdentity() -> APNsClientIdentity {
    let pki = TestPKI.shared
    let leaf = pki.leaf()
    return APNsClientIdentity(certificateChainPEM: pki.clientChainPEM(leaf), privateKeyPEM: pki.pemBytes(leaf.key))
}

/// A mock APNs server and a client pointed at it (trusting the test root).
struct Harness {
    let mock: MockAPNsServer
    let client: APNsClient

    static func start(
        maxConcurrentStreams: Int = 1000,
        wireProtocol serverProtocol: MockAPNsServer.WireProtocol = .http2,
        identity: APNsClientIdentity = passTypeIdentity(),
        configure: (inout APNsConfiguration) -> Void = { _ in }
    ) async throws -> Harness {
        let pki = TestPKI.shared
        let server = pki.apnsServerCertificate()
        let mock = try await MockAPNsServer.start(
            MockAPNsServer.Configuration(
                certificateChainPEM: pki.pemBytes(server.certificate),
                privateKeyPEM: pki.pemBytes(server.key),
                trustRootsPEM: pki.pemBytes(pki.root),
                maxConcurrentStreams: maxConcurrentStreams,
                wireProtocol: serverProtocol
            ))
        var configuration = APNsConfiguration(
            baseURL: mock.baseURL,
            additionalTrustRootsPEM: pki.pemBytes(pki.root),
            // Generous: debug builds of NIO are slow and tests run in parallel on 2 cores.
            // The connect timeout also bounds how long AHC lets a request wait in its
            // pool for a free HTTP/2 stream (getConnectionFromPoolTimeout), which the
            // test that sends more than the server's stream limit relies on.
            requestTimeout: .seconds(60),
            connectTimeout: .seconds(30)
        )
        configure(&configuration)
        do {
            let client = try APNsClient(identity: identity, configuration: configuration)
            return Harness(mock: mock, client: client)
        } catch {
            try? await mock.shutdown()
            throw error
        }
    }

    /// A sender over this client that never really sleeps, recording its waits.
    func sender(maxInFlight: Int = 100, policy: APNsRetryPolicy = .default, waits: Recorder<Duration>? = nil)
        -> PushSender
    {
        PushSender(
            client: client, retryPolicy: policy, maxInFlight: maxInFlight,
            sleep: { delay in
                waits?.append(delay)
            })
    }

    func shutdown() async {
        try? await client.shutdown()
        try? await mock.shutdown()
    }
}

/// Runs `body` with a fresh harness, always shutting it down.
func withHarness(
    maxConcurrentStreams: Int = 1000,
    wireProtocol serverProtocol: MockAPNsServer.WireProtocol = .http2,
    identity: APNsClientIdentity = passTypeIdentity(),
    configure: (inout APNsConfiguration) -> Void = { _ in },
    _ body: (Harness) async throws -> Void
) async throws {
    let harness = try await Harness.start(
        maxConcurrentStreams: maxConcurrentStreams, wireProtocol: serverProtocol, identity: identity,
        configure: configure
    )
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

/// A thread-safe list, for things reported from concurrent tasks.
final class Recorder<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    func append(_ element: Element) { elements.withLock { $0.append(element) } }
    var all: [Element] { elements.withLock { $0 } }
}

extension MockAPNsServer {
    /// How many 200 answers the mock wrote for each token.
    func deliveries() -> [String: Int] {
        var counts: [String: Int] = [:]
        for request in requests where request.outcome == .answered(status: 200) {
            counts[request.token ?? "", default: 0] += 1
        }
        return counts
    }
}
