import MockAPNs
import PassPush
import TestSupport
import Testing

@Suite("APNsConnectionGroup: several HTTP/2 connections per topic, against the mock over loopback")
struct APNsConnectionGroupTests {
    @Test func pushesSpreadOverEveryConnectionWithinEachOnesStreamLimit() async throws {
        // Each connection allows 5 streams; the sender keeps 4 × 5 in flight.
        try await withHarness(maxConcurrentStreams: 5) { harness in
            harness.mock.setDefaultAnswer(.delayed(.milliseconds(20), .ok))
            var configuration = harness.client.configuration
            configuration.maxRequestsInFlight = 5
            let group = try APNsConnectionGroup(identity: passTypeIdentity(), configuration: configuration, count: 4)
            let sender = PushSender(group: group)
            #expect(sender.maxInFlight == 20)
            let summary = await sender.send(notifications(200)) { _ in }
            try await group.shutdown()

            #expect(summary.succeeded == 200)
            #expect(summary.retries == 0)
            #expect(harness.mock.connectionsAccepted == 4)
            #expect(group.connectionsEstablished == 4)
            // Never more than a connection allows: no push waited in a client's pool for a stream.
            #expect(harness.mock.maxStreamsInFlight <= 5)
            var perConnection: [Int: Int] = [:]
            for request in harness.mock.requests { perConnection[request.connection, default: 0] += 1 }
            #expect(Set(perConnection.keys) == [1, 2, 3, 4])
            // The first burst alone gives each connection 5 pushes.
            #expect(perConnection.values.allSatisfy { $0 >= 5 })
            #expect(harness.mock.deliveries().count == 200)
            #expect(harness.mock.deliveries().values.allSatisfy { $0 == 1 })
        }
    }

    @Test func oneConnectionIsTheDefault() async throws {
        try await withHarness { harness in
            let group = try APNsConnectionGroup(
                identity: passTypeIdentity(), configuration: harness.client.configuration,
                count: APNsConfiguration().connectionsPerTopic)
            let summary = await PushSender(group: group).send(notifications(50)) { _ in }
            try await group.shutdown()
            #expect(summary.succeeded == 50)
            #expect(harness.mock.connectionsAccepted == 1)
            #expect(group.count == 1)
        }
    }

    @Test func theEnvironmentSetsTheConnectionsAndRefusesNonsense() throws {
        let variable = APNsConfiguration.connectionsVariable
        #expect(try APNsConfiguration.fromEnvironment([variable: "4"]).connectionsPerTopic == 4)
        #expect(try APNsConfiguration.fromEnvironment([:]).connectionsPerTopic == 1)
        for bad in ["0", "17", "four", "-1"] {
            let error = #expect(throws: APNsClientError.self) { try APNsConfiguration.fromEnvironment([variable: bad]) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("PASSFORGE_APNS_CONNECTIONS=\(bad)"))
        }
    }
}
