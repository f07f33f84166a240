import Foundation
import MockAPNs
import NIOCore
import NIOPosix
import PassPush
import TestSupport
import Testing

@Suite("PushSender against the mock, over loopback")
struct PushSenderTests {
    @Test func deliversAndReportsEveryOutcomeOnce() async throws {
        try await withHarness { harness in
            let outcomes = Recorder<PushOutcome>()
            let summary = await harness.sender().send(notifications(20) + notifications(5)) { outcomes.append($0) }
            #expect(summary.succeeded == 20)
            #expect(summary.sent == 20)
            #expect(summary.retries == 0)
            #expect(summary.stopReason == nil)
            #expect(Set(outcomes.all.map(\.notification.token)).count == 20)
            #expect(outcomes.all.count == 20)
            #expect(outcomes.all.allSatisfy { if case .delivered = $0.result { true } else { false } })
        }
    }

    @Test func invalidTokensAreReported() async throws {
        try await withHarness { harness in
            let since = Date(timeIntervalSince1970: 1_700_000_000)
            harness.mock.enqueue([.badDeviceToken], forToken: token(1))
            harness.mock.enqueue([.unregistered(timestamp: since)], forToken: token(2))
            let outcomes = Recorder<PushOutcome>()
            let summary = await harness.sender().send(notifications(3)) { outcomes.append($0) }
            #expect(summary.succeeded == 1)
            #expect(summary.tokensInvalid == 2)
            #expect(summary.retries == 0)
            let byToken = Dictionary(uniqueKeysWithValues: outcomes.all.map { ($0.notification.token, $0.result) })
            #expect(byToken[token(1)] == .tokenInvalid(since: nil, reason: "BadDeviceToken"))
            #expect(byToken[token(2)] == .tokenInvalid(since: since, reason: "Unregistered"))
        }
    }

    @Test func retries429And500And503ThenDeliversExactlyOnce() async throws {
        try await withHarness { harness in
            harness.mock.enqueue([.tooManyRequests], forToken: token(1))
            harness.mock.enqueue([.internalServerError, .serviceUnavailable], forToken: token(2))
            harness.mock.enqueue([.serviceUnavailable], forToken: token(3))
            let waits = Recorder<Duration>()
            let policy = APNsRetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(100), maxDelay: .seconds(2))
            let summary = await harness.sender(policy: policy, waits: waits).send(notifications(5)) { _ in }
            #expect(summary.succeeded == 5)
            #expect(summary.retries == 4)
            #expect(summary.sent == 9)
            #expect(harness.mock.deliveries().values.allSatisfy { $0 == 1 })
            #expect(harness.mock.deliveries().count == 5)
            // Full jitter: each wait lies within its exponential ceiling.
            #expect(waits.all.count == 4)
            #expect(waits.all.allSatisfy { $0 >= .zero && $0 <= .milliseconds(200) })
        }
    }

    @Test func leavesPushesPendingWhenRetriesRunOut() async throws {
        try await withHarness { harness in
            harness.mock.enqueue(Array(repeating: .serviceUnavailable, count: 3), forToken: token(1))
            let outcomes = Recorder<PushOutcome>()
            let policy = APNsRetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .seconds(1))
            let summary = await harness.sender(policy: policy).send(notifications(2)) { outcomes.append($0) }
            #expect(summary.succeeded == 1)
            #expect(summary.leftPending == 1)
            #expect(summary.stopReason == nil)
            let pending = outcomes.all.first { $0.notification.token == token(1) }
            #expect(pending?.result == .leftPending(.retriesExhausted(.status(503, reason: "ServiceUnavailable"))))
            #expect(pending?.attempts == 3)
        }
    }

    @Test func survivesAGoAwayMidRunWithoutDeliveringAnythingTwice() async throws {
        try await withHarness { harness in
            // Slow answers keep many streams open when the GOAWAY comes.
            harness.mock.setDefaultAnswer(.delayed(.milliseconds(2), .ok))
            harness.mock.enqueue([.goAway], forToken: token(100))
            let summary = await harness.sender(maxInFlight: 20).send(notifications(200)) { _ in }
            #expect(summary.succeeded == 200)
            #expect(summary.leftPending == 0)
            #expect(summary.retries >= 1)
            let deliveries = harness.mock.deliveries()
            #expect(deliveries.count == 200)
            #expect(deliveries.values.allSatisfy { $0 == 1 })
            #expect(harness.mock.requests.contains { $0.outcome == .sentGoAway && $0.connection == 1 })
            #expect(harness.mock.connectionsAccepted == 2)
            #expect(harness.client.connectionsEstablished == 2)
        }
    }

    @Test func retriesPushesOnADroppedConnection() async throws {
        try await withHarness { harness in
            harness.mock.enqueue([.dropConnection], forToken: token(20))
            let summary = await harness.sender(maxInFlight: 10).send(notifications(40)) { _ in }
            #expect(summary.succeeded == 40)
            #expect(summary.retries >= 1)
            #expect(harness.mock.connectionsAccepted == 2)
            #expect(harness.mock.deliveries()[token(20)] == 1)
            #expect(harness.mock.requests.contains { $0.token == token(20) && $0.outcome == .droppedConnection })
        }
    }

    @Test func a403StopsTheRunAndLeavesTheRestPending() async throws {
        try await withHarness { harness in
            harness.mock.enqueue([.status(403, reason: "BadCertificate")], forToken: token(10))
            let outcomes = Recorder<PushOutcome>()
            let summary = await harness.sender(maxInFlight: 1).send(notifications(50)) { outcomes.append($0) }
            #expect(summary.succeeded == 10)
            #expect(summary.leftPending == 40)
            #expect(harness.mock.requestCount == 11)
            let stop = try #require(summary.stopReason)
            #expect(stop.kind == .certificateRejected)
            #expect(stop.status == 403)
            #expect(stop.message.contains("Pass Type ID certificate"))
            #expect(outcomes.all.count == 50)
            #expect(outcomes.all.filter { $0.result == .leftPending(.notStarted) }.count == 39)
        }
    }

    @Test func aWrongTopicStopsTheRunWithAClearMessage() async throws {
        try await withHarness { harness in
            harness.mock.setDefaultAnswer(.status(400, reason: "DeviceTokenNotForTopic"))
            let summary = await harness.sender(maxInFlight: 8).send(notifications(30)) { _ in }
            #expect(summary.stopReason?.kind == .wrongTopic)
            #expect(summary.stopReason?.message.contains("passTypeIdentifier") == true)
            #expect(summary.succeeded == 0)
            #expect(summary.leftPending == 30)
            // The first push goes alone, so the run stops after that one request.
            #expect(harness.mock.requestCount == 1)
        }
    }

    @Test func twoThousandPushesShareOneConnectionWithinTheStreamLimit() async throws {
        try await withHarness(maxConcurrentStreams: 100) { harness in
            // 30 in flight keeps this fast in debug builds, where NIOHTTP2 and AHC
            // scan open streams and queued requests linearly (≈3 ms of CPU per push
            // at 10 in flight, ≈10 ms at 300). Sending more than the server allows
            // is the next test's job.
            let summary = await harness.sender(maxInFlight: 30).send(notifications(2000)) { _ in }
            #expect(summary.succeeded == 2000)
            #expect(harness.mock.connectionsAccepted == 1)
            #expect(harness.client.connectionsEstablished == 1)
            #expect(harness.mock.maxStreamsInFlight <= 30)
            #expect(harness.mock.maxStreamsInFlight > 1)
            #expect(Set(harness.mock.requests.map(\.connection)) == [1])
        }
    }

    @Test func pushesBeyondTheServersStreamLimitWaitForAStreamOnTheSameConnection() async throws {
        try await withHarness(maxConcurrentStreams: 5) { harness in
            harness.mock.setDefaultAnswer(.delayed(.milliseconds(20), .ok))
            let summary = await harness.sender(maxInFlight: 50).send(notifications(100)) { _ in }
            #expect(summary.succeeded == 100)
            #expect(harness.mock.connectionsAccepted == 1)
            // Saturated: exactly the server's limit, never more.
            #expect(harness.mock.maxStreamsInFlight == 5)
        }
    }

    @Test func anUnreachableHostStopsWithHostAndPort() async throws {
        // A port that was free a moment ago: connecting to it is refused.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(probe.localAddress?.port)
        try await probe.close()

        let pki = TestPKI.shared
        let client = try APNsClient(
            identity: passTypeIdentity(),
            configuration: APNsConfiguration(
                baseURL: "https://127.0.0.1:\(port)", additionalTrustRootsPEM: pki.pemBytes(pki.root)
            ))
        let waits = Recorder<Duration>()
        let sender = PushSender(client: client, retryPolicy: .default, maxInFlight: 10, sleep: { waits.append($0) })
        let summary = await sender.send(notifications(3)) { _ in }
        try await client.shutdown()
        let stop = try #require(summary.stopReason)
        #expect(stop.kind == .unreachable)
        #expect(stop.message.contains("127.0.0.1:\(port)"))
        #expect(summary.leftPending == 3)
        #expect(summary.sent == APNsRetryPolicy.default.maxAttempts)
        #expect(waits.all.count == APNsRetryPolicy.default.maxAttempts - 1)
    }
}
