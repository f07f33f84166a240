import Foundation
import NIOHTTP1
import PassBuild
import TestSupport
import Testing
import WalletTree

/// `GET /metrics` after a scripted workload: every counter is exactly the workload's.
@Suite(.serialized) struct MetricsTests {
    /// Sample lines of the Prometheus text format: name, labels, value.
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    static func samples(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let series = line[..<space]
            guard let open = series.firstIndex(of: "{") else {
                return Sample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",")
            {
                let parts = pair.split(separator: "=", maxSplits: 1)
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<open]), labels: labels, value: value)
        }
    }

    @Test func countersMatchAScriptedWorkloadExactly() async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let token0 = try await built.token("C-0000")
        let token1 = try await built.token("C-0001")
        let push = hexToken("d4")

        #expect(try await client.send(.GET, "/health").status == 200)
        #expect(try await client.send(.GET, "/health").status == 200)
        #expect(try await client.register("dev1", type, "C-0000", token: token0, pushToken: push).status == 201)
        #expect(try await client.register("dev1", type, "C-0000", token: token0, pushToken: push).status == 200)
        #expect(try await client.register("dev2", type, "C-0001", token: token1, pushToken: push).status == 201)
        #expect(try await client.serials("dev1", type).status == 200)
        #expect(try await client.serials("nobody", type).status == 204)
        #expect(try await client.pass(type, "C-0000", token: nil).status == 401)
        #expect(try await client.unregister("dev2", type, "C-0001", token: token1).status == 200)
        #expect(try await client.send(.POST, "/v1/log", body: Array(#"{"logs":["one","two"]}"#.utf8)).status == 200)
        #expect(try await client.send(.GET, "/nothing/here").status == 404)

        let scrape = try await client.send(.GET, "/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.header("Content-Type")?.hasPrefix("text/plain") == true)
        let samples = Self.samples(scrape.text)
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        let requests = "passforge_http_requests_total"
        #expect(value(requests, ["route": "health", "method": "GET", "status": "200"]) == 2)
        #expect(value(requests, ["route": "registration", "method": "POST", "status": "201"]) == 2)
        #expect(value(requests, ["route": "registration", "method": "POST", "status": "200"]) == 1)
        #expect(value(requests, ["route": "registration", "method": "DELETE", "status": "200"]) == 1)
        #expect(value(requests, ["route": "serialNumbers", "method": "GET", "status": "200"]) == 1)
        #expect(value(requests, ["route": "serialNumbers", "method": "GET", "status": "204"]) == 1)
        #expect(value(requests, ["route": "pass", "method": "GET", "status": "401"]) == 1)
        #expect(value(requests, ["route": "log", "method": "POST", "status": "200"]) == 1)
        #expect(value(requests, ["route": "unmatched", "method": "GET", "status": "404"]) == 1)
        #expect(
            samples.filter { $0.name == requests }.reduce(0) { $0 + $1.value } == 11,
            "only the workload, not the scrape itself")
        let latency = "passforge_http_request_duration_seconds"
        #expect(value(latency + "_count", ["route": "registration", "method": "POST"]) == 3)
        #expect(value(latency + "_bucket", ["route": "registration", "method": "POST", "le": "+Inf"]) == 3)
        #expect(value("passforge_registration_changes_total", ["outcome": "created"]) == 2)
        #expect(value("passforge_registration_changes_total", ["outcome": "unchanged"]) == 1)
        #expect(value("passforge_registration_changes_total", ["outcome": "removed"]) == 1)
        #expect(value("passforge_device_log_messages_total") == 2)
        #expect(value("passforge_registrations") == 1)
        #expect(value("passforge_devices") == 1)
        #expect(value("passforge_push_queue_depth") == 0)
        #expect(value("passforge_push_oldest_pending_age_seconds") == 0)
        #expect(value("passforge_passes") == 2)
        #expect(value("passforge_build_update_tag") == Double(try built.buildState().lastUpdateTag))
        #expect(await server.stop() == 0)
    }
}
