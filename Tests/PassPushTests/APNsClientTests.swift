import AsyncHTTPClient
import Foundation
import MockAPNs
import NIOCore
import NIOHTTP1
import NIOSSL
import PassPush
import TestSupport
import Testing

@Suite("APNs client against the mock, over loopback")
struct APNsClientTests {
    @Test func sendsThePassPushRequestAndIsAuthenticatedByItsCertificate() async throws {
        try await withHarness { harness in
            let response = try await harness.client.send(token: token(1), topic: topic)
            #expect(response.status == 200)
            #expect(response.apnsID?.isEmpty == false)

            let requests = harness.mock.requests
            try #require(requests.count == 1)
            let request = requests[0]
            #expect(request.method == "POST")
            #expect(request.path == "/3/device/\(token(1))")
            #expect(request.header("apns-topic") == topic)
            #expect(request.header("apns-push-type") == "background")
            #expect(request.header("apns-priority") == "5")
            #expect(request.body == Array("{}".utf8))
            #expect(request.clientSubjectFields["UID"] == topic)
            #expect(request.clientSubjectFields["CN"] == "Pass Type ID: \(topic)")
            #expect(request.clientSubjectFields["OU"] == TestPKI.team)
            #expect(request.clientSubject?.hasPrefix("UID=\(topic), CN=Pass Type ID: \(topic)") == true)
            #expect(request.connection == 1)
        }
    }

    @Test func parsesUnregisteredWithItsTimestamp() async throws {
        try await withHarness { harness in
            let lastValid = Date(timeIntervalSince1970: 1_700_000_000.250)
            harness.mock.enqueue([.unregistered(timestamp: lastValid)], forToken: token(2))
            let response = try await harness.client.send(token: token(2), topic: topic)
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            let timestamp = try #require(response.timestamp)
            #expect(abs(timestamp.timeIntervalSince(lastValid)) < 0.001)
            #expect(
                APNsVerdict(response, topic: topic, endpoint: harness.client.endpoint)
                    == .tokenInvalid(since: timestamp, reason: "Unregistered"))
        }
    }

    @Test func refusesAClientWithoutACertificate() async throws {
        try await withHarness { harness in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(TestPKI.shared.root))]
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.connectionPool.retryConnectionEstablishment = false
            let bare = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            var request = HTTPClientRequest(url: harness.mock.baseURL + "/3/device/" + token(3))
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: "{}"))
            await #expect(throws: (any Error).self) {
                _ = try await bare.execute(request, timeout: .seconds(5))
            }
            try await bare.shutdown()
            #expect(harness.mock.requestCount == 0)
            #expect(harness.mock.connectionsAccepted >= 1)
        }
    }

    @Test func refusesAClientCertificateFromAnotherAuthority() async throws {
        let pki = TestPKI.shared
        let foreign = pki.foreignClientCertificate()
        let identity = APNsClientIdentity(
            certificateChainPEM: pki.pemBytes(foreign.certificate), privateKeyPEM: pki.pemBytes(foreign.key)
        )
        try await withHarness(identity: identity) { harness in
            let policy = APNsRetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10), maxDelay: .seconds(1))
            let summary = await harness.sender(policy: policy).send(notifications(3)) { _ in }
            #expect(harness.mock.requestCount == 0)
            #expect(harness.mock.connectionsAccepted >= 1)
            #expect(summary.succeeded == 0)
            #expect(summary.leftPending == 3)
            let stop = try #require(summary.stopReason)
            #expect(stop.kind == .tlsFailure)
            #expect(stop.message.contains("127.0.0.1:\(harness.mock.port)"))
            #expect(stop.message.contains("certificate"))
        }
    }

    @Test func rejectsAServerThatIsNotHTTP2() async throws {
        try await withHarness(wireProtocol: .http1) { harness in
            await #expect(throws: APNsClientError.self) {
                _ = try await harness.client.send(token: token(4), topic: topic)
            }
            let summary = await harness.sender().send(notifications(2)) { _ in }
            #expect(summary.stopReason?.kind == .notHTTP2)
            #expect(summary.stopReason?.message.contains("HTTP/2") == true)
        }
    }

    @Test func refusesMalformedTokensWithoutSendingThem() async throws {
        try await withHarness { harness in
            let malformed = "../../3/device/" + token(5)
            let error = await #expect(throws: APNsClientError.self) {
                _ = try await harness.client.send(token: malformed, topic: topic)
            }
            // Errors show tokens truncated to their first 8 characters.
            #expect(error == .malformedToken("../../3/…"))
            #expect(error?.description.contains(token(5)) == false)
            #expect(harness.mock.requestCount == 0)
        }
    }

    @Test func rejectsUnreadableIdentities() {
        #expect(throws: APNsClientError.self) {
            _ = try APNsClient(identity: APNsClientIdentity(certificateChainPEM: Array("nope".utf8), privateKeyPEM: []))
        }
        let pki = TestPKI.shared
        let other = pki.apnsServerCertificate()
        // A real certificate with somebody else's key.
        #expect(throws: APNsClientError.self) {
            _ = try APNsClient(
                identity: APNsClientIdentity(
                    certificateChainPEM: pki.clientChainPEM(pki.leaf()), privateKeyPEM: pki.pemBytes(other.key)
                ))
        }
    }
}
