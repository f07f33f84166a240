import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// `passforge stats` against registrations made through the real `passforge serve`: issued, on devices now,
/// ever added, registrations and removals of the day, the same counts in `/metrics`; never a device or token.
@Suite struct InstallStatsTests {
    @Test func statsMatchRegistrationsMadeThroughTheService() async throws {
        let built = try await BuiltProject.make(passCount: 4)
        let server = try await ServerProcess(built)
        defer { server.terminate() }
        let client = Client(base: server.base)
        let type = built.type
        let (deviceA, deviceB) = ("aaaa1111bbbb2222", "cccc3333dddd4444")
        let pushA = ServeEndToEndTests.pushA
        let pushB = String(repeating: "b2", count: 32)
        let token0 = try await built.token("C-0000")
        let token1 = try await built.token("C-0001")
        let token2 = try await built.token("C-0002")
        // C-0000 on two devices, C-0001 added then removed, C-0002 on one; C-0003 never added.
        #expect(try await client.register(deviceA, type, "C-0000", token: token0, pushToken: pushA).status == 201)
        #expect(try await client.register(deviceB, type, "C-0000", token: token0, pushToken: pushB).status == 201)
        // not counted again
        #expect(try await client.register(deviceA, type, "C-0000", token: token0, pushToken: pushA).status == 200)
        #expect(try await client.register(deviceA, type, "C-0001", token: token1, pushToken: pushA).status == 201)
        #expect(try await client.unregister(deviceA, type, "C-0001", token: token1).status == 200)
        #expect(try await client.unregister(deviceA, type, "C-0001", token: token1).status == 200)  // nothing to remove
        #expect(try await client.register(deviceB, type, "C-0002", token: token2, pushToken: pushB).status == 201)

        var environment = built.environment
        environment["CI"] = nil
        let result = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["stats", "--json"], directory: built.project.root,
            environment: environment)
        #expect(result.status == 0, "\(result.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let groups = try #require(json["groups"] as? [[String: Any]])
        #expect(groups.count == 1)
        let group = try #require(groups.first)
        #expect(group["passTypeIdentifier"] as? String == type)
        #expect(group["template"] as? String == "card")
        #expect(group["issued"] as? Int == 4)
        #expect(group["onDevices"] as? Int == 2)
        #expect(group["everAdded"] as? Int == 3)
        #expect(group["shareEverAdded"] as? Double == 0.75)
        let days = try #require(group["days"] as? [[String: Any]])
        #expect(days.count == 1)
        #expect(days.first?["registrations"] as? Int == 4)
        #expect(days.first?["removals"] as? Int == 1)
        let text = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["stats"], directory: built.project.root, environment: environment)
        for secret in [deviceA, deviceB, pushA, pushB] {
            #expect(!result.output.contains(secret) && !text.output.contains(secret))
        }
        #expect(text.stdout.contains("\t4\t2\t3\t75.0 %"))

        let metrics = String(decoding: try await client.send(.GET, "/metrics").body, as: UTF8.self)
        let samples = MetricsTests.samples(metrics)
        let labels = ["pass_type": type, "template": "card", "offer": ""]
        for (name, value) in [
            ("passforge_passes_issued", 4.0), ("passforge_passes_on_devices", 2), ("passforge_passes_ever_added", 3),
        ] {
            #expect(samples.first { $0.name == name && $0.labels == labels }?.value == value, "\(name)")
        }
        for secret in [deviceA, deviceB, pushA, pushB] { #expect(!metrics.contains(secret)) }
    }
}
