import Foundation
import MockAPNs
import NIOHTTP1
import PassBuild
import TestSupport
import Testing
import WalletTree

/// `passforge build --push`, `passforge push` and `serve --push` as real
/// processes, against the in-process APNs mock (HTTP/2, mutual TLS) and the
/// real server and SQLite store.
@Suite(.serialized) struct PushEndToEndTests {
    static func token(_ byte: String) -> String { String(repeating: byte, count: 32) }

    /// A mock APNs trusting the test root, and the environment that points passforge at it.
    static func startMock() async throws -> (MockAPNsServer, [String: String]) {
        let pki = TestPKI.shared
        let server = pki.apnsServerCertificate()
        let mock = try await MockAPNsServer.start(
            MockAPNsServer.Configuration(
                certificateChainPEM: pki.pemBytes(server.certificate), privateKeyPEM: pki.pemBytes(server.key),
                trustRootsPEM: pki.pemBytes(pki.root)))
        return (mock, ["PASSFORGE_APNS_URL": mock.baseURL, "PASSFORGE_APNS_CA_CERTIFICATE": pki.root])
    }

    static func requests(_ mock: MockAPNsServer, after baseline: Int = 0) -> [MockAPNsRequest] {
        Array(mock.requests.dropFirst(baseline))
    }

    @Test(arguments: Backend.allCases) func buildPushSendsOnePushPerTokenAndHandlesEachAnswer(backend: Backend)
        async throws
    {
        let (mock, apns) = try await Self.startMock()
        defer { Task { try? await mock.shutdown() } }
        let built = try await BuiltProject.make(passCount: 4)
        built.environment.merge(apns) { _, new in new }
        try backend.configure(built)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let tokenA = Self.token("a1")
        let tokenB = Self.token("b2")
        let tokenC = Self.token("c3")
        let tokenD = Self.token("d4")
        // devA holds two passes that will change, devB one, devC one (its token dies), devD one that will not change.
        for (device, serial, pushToken) in [
            ("devA", "C-0000", tokenA), ("devA", "C-0001", tokenA), ("devB", "C-0001", tokenB),
            ("devC", "C-0002", tokenC), ("devD", "C-0003", tokenD),
        ] {
            #expect(
                try await client.register(
                    device, type, serial, token: try await built.token(serial), pushToken: pushToken
                ).status == 201)
        }
        // The first push run knows no cursor: every holder of a pass is told once.
        let first = try await built.project.passforge(["push"], environment: built.environment)
        #expect(first.status == 0, "\(first.output)")
        #expect(Set(mock.requests.compactMap(\.token)) == [tokenA, tokenB, tokenC, tokenD])
        #expect(mock.requests.count == 4)
        let baseline = mock.requests.count

        // Content changes for C-0000…C-0002; C-0003 stays.
        mock.enqueue([.unregistered(timestamp: Date().addingTimeInterval(3600))], forToken: tokenC)
        mock.enqueue([.serviceUnavailable, .ok], forToken: tokenB)
        built.project.writeList(count: 4, points: { $0 < 3 ? 1000 + $0 : $0 })
        let run = try await built.project.passforge(["build", "--push"], environment: built.environment)
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.stdout.contains("pushed: sent 4, succeeded 2, removed tokens 1 (1 device), retried 1, failed 0"),
            "\(run.output)")

        let pushes = Self.requests(mock, after: baseline)
        #expect(pushes.filter { $0.token == tokenA }.count == 1)  // two changed passes, one push
        #expect(
            pushes.filter { $0.token == tokenB }.map(\.outcome) == [.answered(status: 503), .answered(status: 200)])
        #expect(pushes.filter { $0.token == tokenC }.count == 1)
        #expect(pushes.filter { $0.token == tokenD }.isEmpty)
        for push in pushes {
            #expect(push.method == "POST")
            #expect(push.path == "/3/device/\(push.token ?? "")")
            #expect(push.body == Array("{}".utf8))
            let headers = Dictionary(push.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(headers["apns-topic"] == type)
            #expect(headers["apns-push-type"] == "background")
            #expect(headers["apns-priority"] == "5")
            #expect(push.clientSubjectFields["UID"] == type)
        }
        // The dead token's registrations, device and index file are gone.
        #expect(try await built.sql("SELECT COUNT(*) FROM devices WHERE library_identifier = 'devC'") == "0")
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "4")
        #expect(built.fileBytes(TreeLayout.deviceIndexPath(device: "devC", type: type)) == nil)
        #expect(built.fileBytes(TreeLayout.deviceIndexPath(device: "devA", type: type)) != nil)
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "0")

        // Nothing changed since: the next run sends nothing.
        let again = try await built.project.passforge(["push"], environment: built.environment)
        #expect(again.status == 0, "\(again.output)")
        #expect(mock.requests.count == baseline + pushes.count)
        #expect(!run.output.contains(tokenA) && !run.output.contains(tokenB))

        // --dry-run says what would go out and changes nothing.
        built.project.writeList(count: 4, points: { $0 < 3 ? 1000 + $0 : 5000 })
        try await built.build()
        let cursor = try await built.sql("SELECT update_tag FROM push_cursor")
        let dry = try await built.project.passforge(["push", "--dry-run"], environment: built.environment)
        #expect(dry.status == 0, "\(dry.output)")
        #expect(dry.stdout.contains("would push \(type) to d4d4d4d4…"), "\(dry.output)")
        #expect(
            dry.stdout.contains("dry run: 1 changed pass, 1 push would be sent; nothing was sent or changed"),
            "\(dry.output)")
        #expect(mock.requests.count == baseline + pushes.count)
        #expect(try await built.sql("SELECT update_tag FROM push_cursor") == cursor)
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "0")

        // One pass by hand: its holders only, whatever the cursor says.
        let byHand = try await built.project.passforge(
            ["push", "--type", type, "--serial", "C-0000"], environment: built.environment)
        #expect(byHand.status == 0, "\(byHand.output)")
        #expect(Self.requests(mock, after: baseline + pushes.count).map(\.token) == [tokenA])
        #expect(try await built.sql("SELECT update_tag FROM push_cursor") == cursor)
        let unknown = try await built.project.passforge(
            ["push", "--type", type, "--serial", "NOPE-1"], environment: built.environment)
        #expect(unknown.status == 1)
        #expect(
            unknown.stderr.contains("there is no pass or order \(type)/NOPE-1 in the last build"), "\(unknown.output)")
        await server.stop()
    }

    @Test(arguments: Backend.allCases) func aKilledRunIsFinishedByTheNextWithoutPushingTwice(backend: Backend)
        async throws
    {
        let (mock, apns) = try await Self.startMock()
        defer { Task { try? await mock.shutdown() } }
        let built = try await BuiltProject.make(passCount: 1)
        built.environment.merge(apns) { _, new in new }
        try backend.configure(built)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let tokens = (0..<30).map { String(format: "%064x", 0xabc000 + $0) }
        let passToken = try await built.token("C-0000")
        for (number, pushToken) in tokens.enumerated() {
            #expect(
                try await client.register("dev\(number)", built.type, "C-0000", token: passToken, pushToken: pushToken)
                    .status == 201)
        }
        await server.stop()
        #expect(try await built.project.passforge(["push"], environment: built.environment).status == 0)
        let baseline = mock.requests.count

        // The pass changes. Ten tokens answer at once, twenty never in time: the run is killed meanwhile.
        for token in tokens[10...] { mock.enqueue([.delayed(.seconds(30), .ok)], forToken: token) }
        built.project.writeList(count: 1, points: { _ in 777 })
        try await built.build()
        let push = PushProcess(built)
        let tenDelivered = try await eventually(timeout: 20) {
            let delivered = Self.requests(mock, after: baseline).filter { $0.outcome == .answered(status: 200) }.count
            let pending = try await built.sql("SELECT COUNT(*) FROM push_queue")
            return delivered == 10 && pending == "20"
        }
        #expect(tenDelivered)
        try await push.kill()

        let finish = try await built.project.passforge(["push"], environment: built.environment)
        #expect(finish.status == 0, "\(finish.output)")
        let after = Self.requests(mock, after: baseline)
        for token in tokens[..<10] {
            #expect(after.filter { $0.token == token }.count == 1, "delivered before the kill: not again")
        }
        for token in tokens[10...] {
            #expect(after.filter { $0.token == token && $0.outcome == .answered(status: 200) }.count == 1)
        }
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "0")
    }

    @Test func badCertificatesAndAnUnreachableHostLeaveThePushesPending() async throws {
        let (mock, apns) = try await Self.startMock()
        defer { Task { try? await mock.shutdown() } }
        let built = try await BuiltProject.make(passCount: 1)
        built.environment.merge(apns) { _, new in new }
        let server = try await ServerProcess(built)
        #expect(
            try await Client(base: server.base).register(
                "dev1", built.type, "C-0000", token: try await built.token("C-0000"),
                pushToken: Self.token("e5")
            ).status == 201)
        await server.stop()

        var unreadable = built.environment
        unreadable["PASSFORGE_SIGNING_CERTIFICATE"] = built.project.root + "/missing.pem"
        let missing = try await built.project.passforge(["push"], environment: unreadable)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("missing.pem"), "\(missing.output)")
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "1")

        let other = TestPKI.shared.leaf(passType: "pass.com.example.other")
        var mismatched = built.environment
        mismatched["PASSFORGE_SIGNING_CERTIFICATE"] = other.certificate
        mismatched["PASSFORGE_SIGNING_KEY"] = other.key
        let wrong = try await built.project.passforge(["push"], environment: mismatched)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("is for pass.com.example.other"), "\(wrong.output)")
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "1")

        var unreachable = built.environment
        unreachable["PASSFORGE_APNS_URL"] = "https://127.0.0.1:\(try freeLoopbackPort())"
        let down = try await built.project.passforge(["push"], environment: unreachable)
        #expect(down.status == 1)
        #expect(down.stderr.contains("Cannot reach APNs at 127.0.0.1"), "\(down.output)")
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "1")
        #expect(mock.requests.isEmpty)
        for result in [missing, wrong, down] {
            #expect(!result.output.contains("Fatal error") && !result.output.contains("0x"))
        }

        // With everything right, the pending push goes out.
        let fine = try await built.project.passforge(["push"], environment: built.environment)
        #expect(fine.status == 0, "\(fine.output)")
        #expect(mock.requests.map(\.token) == [Self.token("e5")])
    }

    @Test func servePushPushesEachNewBuildByItself() async throws {
        let (mock, apns) = try await Self.startMock()
        defer { Task { try? await mock.shutdown() } }
        let built = try await BuiltProject.make(passCount: 2)
        built.environment.merge(apns) { _, new in new }
        let server = try await ServerProcess(built, arguments: ["--push"])
        let client = Client(base: server.base)
        #expect(
            try await client.register(
                "devS", built.type, "C-0001", token: try await built.token("C-0001"), pushToken: Self.token("f6")
            ).status == 201)
        // The server's first look pushed the build it started with; wait for it.
        let firstLook = try await eventually {
            let cursor = try await built.sql("SELECT COUNT(*) FROM push_cursor")
            return cursor == "1"
        }
        #expect(firstLook)
        // `/metrics` counts the pushes by APNs answer: the new build's one push is one more `accepted`.
        func pushes(_ answer: String) async throws -> Double {
            let samples = MetricsTests.samples(try await client.send(.GET, "/metrics").text)
            return samples.first { $0.name == "passforge_pushes_total" && $0.labels == ["answer": answer] }?.value ?? 0
        }
        let acceptedBefore = try await pushes("accepted")
        let baseline = mock.requests.count
        built.project.writeList(count: 2, points: { $0 == 1 ? 99 : $0 })
        try await built.build()
        #expect(
            try await eventually(timeout: 15) {
                Self.requests(mock, after: baseline).contains { $0.token == Self.token("f6") }
            })
        #expect(try await eventually(timeout: 15) { try await pushes("accepted") == acceptedBefore + 1 })
        #expect(try await pushes("unregistered") == 0)
        await server.stop()
    }
}

/// The registration store the processes share: the embedded SQLite file, or
/// a fresh database on the throwaway PostgreSQL server.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    func configure(_ built: BuiltProject) throws {
        if self == .postgres { built.environment["PASSFORGE_DATABASE_URL"] = try PostgresServeTests.freshDatabase() }
    }
}

/// `passforge push` as a background process, to be killed: a run of the tests' async process harness, in
/// which a shell writes its process id to a file, then becomes passforge.
final class PushProcess: Sendable {
    private let run: Task<ProcessResult, any Error>
    private let pidFile: String

    init(_ built: BuiltProject) {
        let pidFile = built.state.file("push-\(UUID().uuidString).pid")
        var environment = ProcessInfo.processInfo.environment
        environment["CI"] = nil
        for (key, value) in built.environment { environment[key] = value }
        let directory = built.project.root
        self.pidFile = pidFile
        run = Task { [environment] in
            try await runProcessWithoutBlocking(
                "/bin/sh", ["-c", #"echo $$ > "$0"; exec "$@""#, pidFile, passforgeExecutable(), "push"],
                directory: directory, environment: environment)
        }
    }

    private var processIdentifier: pid_t? {
        (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// SIGKILL, then awaits the end of the run.
    func kill() async throws {
        guard let pid = processIdentifier else { throw HarnessError("passforge push has not started") }
        Glibc.kill(pid, SIGKILL)
        _ = try await run.value
        try? FileManager.default.removeItem(atPath: pidFile)  // the id is free for other processes now
    }

    deinit { if let pid = processIdentifier { Glibc.kill(pid, SIGKILL) } }
}
