import Foundation
import NIOCore
import TestSupport
import Testing

/// 300 ms of delay each way between `passforge serve` and PostgreSQL (issue 35): a delaying TCP proxy
/// (`TCPProxy`) in front of the test server, 8 devices registering through it. Every answer is 201, or 503
/// with Retry-After, within the store's deadline; nothing acknowledged is lost; the server's memory stays flat.
/// `make faults` runs it (PASSFORGE_TEST_FAULTS=1; no root needed).
@Suite struct PostgresDelayTests {
    static let wanted = ProcessInfo.processInfo.environment["PASSFORGE_TEST_FAULTS"] == "1"

    @Test(.enabled(if: wanted, "make faults: PASSFORGE_TEST_FAULTS=1"), .timeLimit(.minutes(3)))
    func threeHundredMillisecondsEachWayKeepDeadlinesAndMemory() async throws {
        let database = try PostgresTestEnvironment.freshDatabase(prefix: "delay")
        let port = try PostgresFaultTests.port(of: database)
        let built = try await BuiltProject.make(passCount: 1)
        // Migrated first on a direct path: through the delay each of its statements costs 0.6 s.
        built.environment["PASSFORGE_DATABASE_URL"] = database
        await (try ServerProcess(built)).stop()

        let proxy = try TCPProxy(to: port, delay: .milliseconds(300))
        defer { proxy.stop() }
        built.environment["PASSFORGE_DATABASE_URL"] = database.replacingOccurrences(
            of: "127.0.0.1:\(port)/", with: "127.0.0.1:\(proxy.port)/")
        let server = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let load = try await RegistrationLoad(
            built: built, base: server.base, prefix: "delay", requestTimeout: .seconds(60))
        let clients = load.start(clients: 8)
        let outcome: Result<[Int], any Error>
        do {
            try await load.waitForAcknowledged(16, after: nil, within: 60)
            // 10 s more of warm-up, then RSS every 5 s for 20 s: real waits, the fault being measured.
            try await Task.sleep(for: .seconds(10))
            var samples = [try PostgresFaultTests.residentKilobytes(server.process.processIdentifier)]
            for _ in 0..<4 {
                try await Task.sleep(for: .seconds(5))
                samples.append(try PostgresFaultTests.residentKilobytes(server.process.processIdentifier))
            }
            outcome = .success(samples)
        } catch {
            outcome = .failure(error)
        }
        load.stop()
        for client in clients { try await client.value }
        await server.stop()
        let samples = try outcome.get()
        try await Self.check(load.outcomes(), samples: samples, database: database)
    }

    private static func check(_ outcomes: [RegistrationLoad.Outcome], samples: [Int], database: String) async throws {
        RegistrationLoad.expectOnly201Or503WithRetryAfter(outcomes)
        let times = outcomes.map { $0.started.duration(to: $0.finished) }.sorted()
        let slowest = times.last ?? .zero
        // The store's 10 s query deadline, and 3 s of slack for the two shared cores.
        #expect(slowest <= .seconds(13), "a request took \(slowest)")
        let (first, last) = (samples[0], samples[samples.count - 1])
        #expect(Double(last) <= Double(first) * 1.1, "RSS every 5 s after the warm-up: \(samples) kB")
        let stored = Set(try await PostgresFaultTests.devices(database, prefix: "delay"))
        let acknowledged = Set(outcomes.filter(\.isAcknowledged).map(\.device))
        let lost = acknowledged.subtracting(stored)
        #expect(lost.isEmpty, "\(lost.count) acknowledged registrations lost")
        let median = times.isEmpty ? .zero : times[times.count / 2]
        print(
            "300 ms each way: \(acknowledged.count) acknowledged, \(outcomes.count { $0.status == 503 }) "
                + "answered 503; median \(median), slowest \(slowest); RSS every 5 s after the warm-up: \(samples) kB")
    }
}
