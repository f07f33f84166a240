import AsyncHTTPClient
import Foundation
import MockDeviceCheck
import NIOCore
import Synchronization
import TestSupport
import Testing

/// Faults a production deployment meets between `passforge serve` and
/// PostgreSQL (issue 35), with 8 devices registering throughout:
/// - a failover: the primary stopped in immediate mode, its synchronous standby
///   promoted (scripts/with-postgres-replicas.sh starts the pair);
/// - a partition: every packet to and from the server's port dropped for 30 s
///   (nftables, as root), then let through again.
/// What a device sees: 201, or 503 with Retry-After; never a 500, never a
/// hang past the store's deadline; nothing acknowledged is lost.
///
/// `make test` runs the failover (under scripts/with-postgres-replicas.sh; without its variables it is
/// skipped); `make faults` runs them all (PASSFORGE_TEST_PARTITION=1, as root). The failover was out of
/// `make test` for a while: a registration answered 201 before its commit (an autocommit statement is
/// committed at Sync, after its rows; see `PostgresRegistrationStore.transaction`) was lost in 2 of 9 runs.
@Suite(.serialized) struct PostgresFaultTests {
    static let environment = ProcessInfo.processInfo.environment
    static let hasReplicas = environment["PASSFORGE_TEST_REPLICA_URL"] != nil
    static let partitionWanted = environment["PASSFORGE_TEST_PARTITION"] == "1"

    @Test(
        .enabled(if: hasReplicas, "needs scripts/with-postgres-replicas.sh (make test, make faults)"),
        .timeLimit(.minutes(2)))
    func aFailoverLosesNothingAcknowledgedAndAnswers503UntilTheStandbyServes() async throws {
        let variable = PostgresTestEnvironment.variable
        let url = try variable("PASSFORGE_TEST_REPLICA_URL")
        let standbyURL = try variable("PASSFORGE_TEST_REPLICA_STANDBY_URL")
        let pgCtl = try variable("PASSFORGE_TEST_REPLICA_PG_CTL")
        try await DeviceCheckRig.with { rig in
            try await failOver(url: url, standbyURL: standbyURL, pgCtl: pgCtl, rig: rig)
        }
    }

    /// The failover with 8 devices registering and a DeviceCheck claim in flight across it.
    private func failOver(url: String, standbyURL: String, pgCtl: String, rig: DeviceCheckRig) async throws {
        let variable = PostgresTestEnvironment.variable
        let built = try await OfferServeEndToEndTests().project(rig: rig, databaseURL: url)
        let server = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let load = try await RegistrationLoad(built: built, base: server.base, prefix: "failover", serial: "W-1")
        let clients = load.start(clients: 8)

        try await load.waitForAcknowledged(30, after: nil, within: 30)
        let claims = ClaimsAcrossFailover(client: Client(base: server.base), rig: rig)
        try await claims.claimBeforeAndHoldOne()
        let stopped = try await runProcessWithoutBlocking(
            pgCtl, ["-D", try variable("PASSFORGE_TEST_REPLICA_PRIMARY_DATA"), "-m", "immediate", "-w", "stop"])
        #expect(stopped.status == 0, "\(stopped.output)")
        let stoppedAt = ContinuousClock.now
        // The devices meet the stopped primary before the standby takes over.
        #expect(try await eventually { load.outcomes().contains { $0.status == 503 && $0.started > stoppedAt } })
        let promoted = try await runProcessWithoutBlocking(
            pgCtl, ["-D", try variable("PASSFORGE_TEST_REPLICA_STANDBY_DATA"), "-w", "promote"])
        #expect(promoted.status == 0, "\(promoted.output)")
        let promotedAt = ContinuousClock.now
        try await claims.finish(promotedAt: promotedAt, standbyURL: standbyURL)
        try await load.waitForAcknowledged(30, after: promotedAt, within: 20)
        load.stop()
        for client in clients { try await client.value }

        let outcomes = load.outcomes()
        RegistrationLoad.expectOnly201Or503WithRetryAfter(outcomes)
        let firstAnswer = outcomes.filter { $0.status == 201 && $0.started >= promotedAt }.map(\.finished).min()
        let recovery = firstAnswer.map { promotedAt.duration(to: $0) }
        #expect(
            recovery.map { $0 <= .seconds(5) } == true,
            "first registration after the promotion: \(String(describing: recovery))")
        let late = outcomes.filter { $0.started > promotedAt + .seconds(5) && !$0.isAcknowledged }
        #expect(late.isEmpty, "\(late.count) registrations failed more than 5 s after the promotion")
        #expect(outcomes.contains { $0.status == 503 }, "no device saw the switch")

        // Every acknowledged registration is on the new primary.
        let stored = Set(try await Self.devices(standbyURL, prefix: "failover"))
        let acknowledged = Set(outcomes.filter(\.isAcknowledged).map(\.device))
        let lost = acknowledged.subtracting(stored)
        // When each lost one was asked and answered, from the primary's stop (to tell the switch's window).
        let lostTimes = outcomes.filter { lost.contains($0.device) }.map {
            "\($0.device) \($0.status) \(stoppedAt.duration(to: $0.started))…\(stoppedAt.duration(to: $0.finished))"
        }
        #expect(lost.isEmpty, "\(lost.count) acknowledged registrations lost: \(lostTimes.prefix(10))")
        let switchTime = stoppedAt.duration(to: promotedAt)
        let unavailable = outcomes.count { $0.status == 503 }
        print(
            "failover: \(acknowledged.count) acknowledged, \(unavailable) answered 503; "
                + "primary stopped → promoted \(switchTime), promoted → first 201 \(String(describing: recovery))")
        await server.stop()
        #expect(!server.stderr.get().contains("Fatal error"))
    }

    @Test(
        .enabled(if: partitionWanted, "PASSFORGE_TEST_PARTITION=1 (make faults): 30 s, and nftables as root"),
        .timeLimit(.minutes(3)))
    func aThirtySecondPartitionAnswers503WithinTheDeadlineAndHeals() async throws {
        let database = try PostgresTestEnvironment.freshDatabase(prefix: "partition")
        let port = try Self.port(of: database)
        let built = try await BuiltProject.make(passCount: 1)
        built.environment["PASSFORGE_DATABASE_URL"] = database
        let server = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let load = try await RegistrationLoad(
            built: built, base: server.base, prefix: "partition",
            requestTimeout: .seconds(60))
        let clients = load.start(clients: 8)
        let partition = NFTablesPartition(port: port)
        let outcome: Result<Void, any Error>
        do {
            try await load.waitForAcknowledged(100, after: nil, within: 20)
            try await partition.cut()
            let cutAt = ContinuousClock.now
            // The partition lasts 30 s, as the issue asks: this wait is the fault being measured.
            try await Task.sleep(for: .seconds(30))
            try await partition.heal()
            let healedAt = ContinuousClock.now
            try await load.waitForAcknowledged(100, after: healedAt, within: 30)
            load.stop()
            for client in clients { try await client.value }
            try await Self.checkPartition(load.outcomes(), cutAt: cutAt, healedAt: healedAt, database: database)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await partition.heal()
        load.stop()
        await server.stop()
        try outcome.get()
    }

    @Test(
        .enabled(if: partitionWanted, "PASSFORGE_TEST_PARTITION=1 (make faults): nftables as root"),
        .timeLimit(.minutes(6)))
    func fivePercentPacketLossKeepsTheDeadlinesAndTheMemoryFlat() async throws {
        let database = try PostgresTestEnvironment.freshDatabase(prefix: "loss")
        let built = try await BuiltProject.make(passCount: 1)
        built.environment["PASSFORGE_DATABASE_URL"] = database
        let server = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let load = try await RegistrationLoad(
            built: built, base: server.base, prefix: "loss", requestTimeout: .seconds(60))
        let clients = load.start(clients: 8)
        // PASSFORGE_TEST_LOSS_ONE_IN and PASSFORGE_TEST_LOSS_SECONDS change the rate and the sampling (20 s by
        // default) to tell a leak from warm-up (e.g. 1000000 and 180 for a control of the same length).
        let oneIn = Self.environment["PASSFORGE_TEST_LOSS_ONE_IN"].flatMap { Int($0) } ?? 20
        let samplingSeconds = Self.environment["PASSFORGE_TEST_LOSS_SECONDS"].flatMap { Int($0) } ?? 20
        let loss = NFTablesPartition(port: try Self.port(of: database), dropsOneIn: oneIn)
        let outcome: Result<Void, any Error>
        do {
            try await load.waitForAcknowledged(100, after: nil, within: 20)
            try await loss.cut()
            let lossAt = ContinuousClock.now
            // 10 s of warm-up under loss, then RSS every 5 s for 20 s: real waits, the fault being measured.
            try await Task.sleep(for: .seconds(10))
            var samples = [try Self.residentKilobytes(server.process.processIdentifier)]
            for _ in 0..<max(1, samplingSeconds / 5) {
                try await Task.sleep(for: .seconds(5))
                samples.append(try Self.residentKilobytes(server.process.processIdentifier))
            }
            let (before, after) = (samples[0], samples[samples.count - 1])
            try await loss.heal()
            load.stop()
            for client in clients { try await client.value }
            let outcomes = load.outcomes()
            RegistrationLoad.expectOnly201Or503WithRetryAfter(outcomes)
            let slowest = outcomes.map { $0.started.duration(to: $0.finished) }.max() ?? .zero
            // The store's 10 s query deadline, and 3 s of slack for the two shared cores.
            #expect(slowest <= .seconds(13), "a request took \(slowest)")
            #expect(Double(after) <= Double(before) * 1.1, "RSS every 5 s after the warm-up: \(samples) kB")
            let stored = Set(try await Self.devices(database, prefix: "loss"))
            let lost = Set(outcomes.filter(\.isAcknowledged).map(\.device)).subtracting(stored)
            #expect(lost.isEmpty, "\(lost.count) acknowledged registrations lost")
            let under = outcomes.filter { $0.started > lossAt }
            print(
                "5 % loss: \(under.count { $0.status == 201 }) acknowledged, \(under.count { $0.status == 503 }) "
                    + "answered 503 in 30 s; slowest \(slowest); RSS every 5 s after 10 s: \(samples) kB")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await loss.heal()
        load.stop()
        await server.stop()
        try outcome.get()
    }

    /// VmRSS of a process, in kB, from /proc/PID/status.
    static func residentKilobytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw HarnessError("no VmRSS in /proc/\(pid)/status") }
        return kilobytes
    }

    private static func checkPartition(
        _ outcomes: [RegistrationLoad.Outcome], cutAt: ContinuousClock.Instant,
        healedAt: ContinuousClock.Instant, database: String
    ) async throws {
        RegistrationLoad.expectOnly201Or503WithRetryAfter(outcomes)
        // The store's deadline: 10 s for a request holding a connection (queryTimeout), or a second
        // of waiting and a 5 s connect that gets no answer; 3 s of slack for the two shared cores.
        let slowest = outcomes.map { $0.started.duration(to: $0.finished) }.max() ?? .zero
        #expect(slowest <= .seconds(13), "a request took \(slowest)")
        let during = outcomes.filter { $0.started > cutAt + .seconds(1) && $0.finished < healedAt }
        #expect(
            !during.isEmpty && during.allSatisfy { $0.status == 503 },
            "\(during.count) requests during the partition")
        let firstAfter = outcomes.filter { $0.status == 201 && $0.started >= healedAt }.map(\.finished).min()
        let recovery = firstAfter.map { healedAt.duration(to: $0) }
        #expect(
            recovery.map { $0 <= .seconds(15) } == true,
            "first registration after the heal: \(String(describing: recovery))")
        let stored = Set(try await devices(database, prefix: "partition"))
        let acknowledged = Set(outcomes.filter(\.isAcknowledged).map(\.device))
        let lost = acknowledged.subtracting(stored)
        #expect(lost.isEmpty, "\(lost.count) acknowledged registrations lost, e.g. \(lost.sorted().prefix(10))")
        let unavailable = outcomes.count { $0.status == 503 }
        print(
            "partition: \(acknowledged.count) acknowledged, \(unavailable) answered 503, "
                + "slowest answer \(slowest), heal → first 201 \(String(describing: recovery))")
    }

    static func devices(_ url: String, prefix: String) async throws -> [String] {
        let query = "SELECT library_identifier FROM devices WHERE library_identifier LIKE '\(prefix)%'"
        let result = try await runProcessWithoutBlocking(
            "psql", [url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", query])
        guard result.status == 0 else { throw HarnessError("psql failed: \(result.output)") }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    static func port(of url: String) throws -> Int {
        guard let at = url.range(of: "@"), let colon = url[at.upperBound...].firstIndex(of: ":") else {
            throw HarnessError("no port in the test server's URL")
        }
        let digits = url[url.index(after: colon)...].prefix { $0.isNumber }
        guard let port = Int(digits) else { throw HarnessError("no port in the test server's URL") }
        return port
    }
}

/// Three DeviceCheck claims on a pool of three passes (W-1 to W-3): one before the failover, one whose
/// bit update Apple holds while the primary stops and the standby is promoted, one after; then a fourth
/// that must find the pool empty. No pass is handed out twice, and none is lost: the new primary holds
/// exactly the three claims, each with the serial its answer named.
final class ClaimsAcrossFailover: Sendable {
    let client: Client
    let rig: DeviceCheckRig
    let ids = (0..<4).map { _ in UUID().uuidString }

    init(client: Client, rig: DeviceCheckRig) {
        self.client = client
        self.rig = rig
    }
    private let held = Mutex<Task<(Client.Answer, ContinuousClock.Instant), any Error>?>(nil)

    private func claim(_ number: Int) async throws -> Client.Answer {
        try await OfferServeEndToEndTests.claim(client, device: "failover-claim-\(number)", id: ids[number])
    }

    func claimBeforeAndHoldOne() async throws {
        let before = try await claim(0)
        #expect(before.status == 201, "a claim before the failover: \(before.status) \(before.text)")
        // Apple holds its answer to the second claim's bit update (the pass is assigned by then) while the
        // primary stops and the standby is promoted: a real wait, longer than the switch, shorter than the
        // 10 s DeviceCheck deadline; finish(promotedAt:) checks that it did span the promotion.
        rig.server.failNext(.init(status: 200, path: "/v1/update_two_bits", delay: .seconds(6)))
        let task = Task { [self] in (try await claim(1), ContinuousClock.now) }
        held.withLock { $0 = task }
        let reached = try await eventually {
            rig.server.requests.contains { $0.path == "/v1/update_two_bits" && $0.device == "failover-claim-1" }
        }
        #expect(reached, "the second claim never reached Apple's bit update")
    }

    func finish(promotedAt: ContinuousClock.Instant, standbyURL: String) async throws {
        guard let task = held.withLock({ $0 }) else { throw HarnessError("no claim in flight") }
        var (during, answeredAt) = try await task.value
        #expect(answeredAt > promotedAt, "the held claim was answered before the promotion, not across it")
        #expect([201, 503].contains(during.status), "the claim in flight: \(during.status) \(during.text)")
        if during.status == 503 {
            #expect(during.header("Retry-After") != nil, "503 without Retry-After")
            // The app retries with the same claim identifier, once the new primary serves.
            _ = try await eventually(timeout: 10) { (try? await claim(1))?.status == 200 }
            during = try await claim(1)
        }
        let after = try await claim(2)
        #expect(after.status == 201, "a claim after the failover: \(after.status) \(after.text)")
        let extra = try await claim(3)
        #expect(![200, 201].contains(extra.status), "a fourth pass from a pool of three: \(extra.text)")
        let first = try await claim(0)
        #expect(first.status == 200, "the first claim again: \(first.status) \(first.text)")
        let answered = [first, during, after].map { $0.json?["serialNumber"] as? String ?? "none" }
        #expect(Set(answered) == ["W-1", "W-2", "W-3"], "serials handed out: \(answered)")
        let query = "SELECT claim_identifier || ' ' || serial_number FROM offer_claims ORDER BY claimed_at"
        let result = try await runProcessWithoutBlocking(
            "psql", [standbyURL, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", query])
        let stored = Set(result.stdout.split(separator: "\n").map(String.init))
        let expected = Set(zip(ids.prefix(3), answered).map { "\($0.uppercased()) \($1)" })
        #expect(stored == expected, "claims on the new primary: \(stored), answered: \(expected)")
        print(
            "failover claims: the held claim answered \(during.status) "
                + "\(promotedAt.duration(to: answeredAt)) after the promotion")
    }
}

/// Devices registering one pass each, as fast as the server answers, every
/// answer recorded with when it was asked and answered.
final class RegistrationLoad: Sendable {
    struct Outcome: Sendable {
        var device: String
        /// 0: no HTTP answer (the client's timeout, a dropped connection).
        var status: Int
        var retryAfter: String?
        var started: ContinuousClock.Instant
        var finished: ContinuousClock.Instant

        /// 201, or 200 (already registered): a registration the server says it holds.
        var isAcknowledged: Bool { status == 201 || status == 200 }
    }

    let base: String
    let type: String
    let token: String
    let prefix: String
    let serial: String
    let requestTimeout: TimeAmount
    private let recorded = Mutex<[Outcome]>([])
    private let stopped = Mutex(false)

    init(
        built: BuiltProject, base: String, prefix: String, serial: String = "C-0000",
        requestTimeout: TimeAmount = .seconds(30)
    ) async throws {
        self.base = base
        self.type = built.type
        self.token = try await built.token(serial)
        self.prefix = prefix
        self.serial = serial
        self.requestTimeout = requestTimeout
    }

    func outcomes() -> [Outcome] { recorded.withLock { $0 } }
    func stop() { stopped.withLock { $0 = true } }

    func start(clients: Int) -> [Task<Void, any Error>] {
        (0..<clients).map { number in
            Task { [self] in
                var client = Client(base: base)
                client.timeout = requestTimeout
                var sequence = 0
                while !stopped.withLock({ $0 }) {
                    let device = "\(prefix)\(number)x\(sequence)"
                    let started = ContinuousClock.now
                    var outcome = Outcome(
                        device: device, status: 0, retryAfter: nil, started: started,
                        finished: started)
                    if let answer = try? await client.register(
                        device, type, serial, token: token,
                        pushToken: hexToken("5c"))
                    {
                        outcome.status = answer.status
                        outcome.retryAfter = answer.header("Retry-After")
                    }
                    outcome.finished = .now
                    recorded.withLock { $0.append(outcome) }
                    if outcome.isAcknowledged { sequence += 1 }
                }
            }
        }
    }

    /// Waits until `count` registrations asked after `after` were acknowledged.
    func waitForAcknowledged(_ count: Int, after: ContinuousClock.Instant?, within seconds: Double) async throws {
        let reached = try await eventually(timeout: seconds) {
            outcomes().count { $0.status == 201 && $0.started >= (after ?? $0.started) } >= count
        }
        if !reached {
            stop()
            throw HarnessError(
                "fewer than \(count) registrations acknowledged within \(seconds) s: "
                    + "statuses \(Dictionary(grouping: outcomes(), by: \.status).mapValues(\.count))")
        }
    }

    /// Every answer 201, or 503 with Retry-After; or 200 (already registered) for a device asked again
    /// after a 503 or no answer: a change committed while its answer was lost (the server went away
    /// between its commit and the COMMIT's reply) is there on the retry, as it must be.
    static func expectOnly201Or503WithRetryAfter(_ outcomes: [Outcome]) {
        let statuses = Dictionary(grouping: outcomes, by: \.status).mapValues(\.count)
        #expect(Set(statuses.keys).isSubset(of: [200, 201, 503]), "statuses: \(statuses)")
        let failed = Set(outcomes.filter { $0.status == 503 || $0.status == 0 }.map(\.device))
        let unexplained = outcomes.filter { $0.status == 200 && !failed.contains($0.device) }
        #expect(unexplained.isEmpty, "200 for \(unexplained.count) devices never asked before")
        let bare = outcomes.filter { $0.status == 503 && $0.retryAfter == nil }
        #expect(bare.isEmpty, "\(bare.count) answers 503 without Retry-After")
    }
}

/// An nftables table dropping every packet to and from one TCP port on this
/// machine (both directions cross the output hook on loopback), so that open
/// connections hang rather than close, and new ones get no answer.
struct NFTablesPartition {
    let port: Int
    /// Drops one packet in this many at random (`numgen random mod N < 1`); nil drops every packet.
    var dropsOneIn: Int? = nil
    let table = "passforge_partition_\(getpid())"

    func cut() async throws {
        try await nft(["add", "table", "inet", table])
        let hook = "{ type filter hook output priority 0; policy accept; }"
        try await nft(["add", "chain", "inet", table, "output", hook])
        let sample = dropsOneIn.map { ["numgen", "random", "mod", "\($0)", "<", "1"] } ?? []
        for direction in ["dport", "sport"] {
            try await nft(["add", "rule", "inet", table, "output", "tcp", direction, "\(port)"] + sample + ["drop"])
        }
    }

    func heal() async throws {
        let listed = try await runProcessWithoutBlocking("nft", ["list", "table", "inet", table])
        guard listed.status == 0 else { return }
        try await nft(["delete", "table", "inet", table])
    }

    private func nft(_ arguments: [String]) async throws {
        let result = try await runProcessWithoutBlocking("nft", arguments)
        guard result.status == 0 else {
            throw HarnessError(
                "nft \(arguments.joined(separator: " ")) failed (\(result.status)); nftables needs root "
                    + "and apt-get install nftables: \(result.output)")
        }
    }
}
