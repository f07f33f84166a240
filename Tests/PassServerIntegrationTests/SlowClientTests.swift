import Foundation
import NIOCore
import NIOHTTP1
import PassServer
import TestSupport
import Testing
import WalletTree

/// issue 31: about 1,020 half-sent requests stopped `passforge serve` under
/// the soft open-file limit of 1024 that systemd gives a service, directly
/// and behind Caddy. The server raises its soft limit to the hard one, caps
/// its connections below it, and at the cap closes the oldest idle or
/// half-sent connection for each new one, so `/health` and registrations
/// still get in.
@Suite(.serialized) struct SlowClientTests {
    static let slowClients = 1_100

    /// Half of them stop in the headers, half in the body (all in the body with `allInTheBody`); the
    /// request deadline is an hour, so only the cap can make room.
    static func halfSentRequests(
        port: Int, count: Int = slowClients,
        allInTheBody: Bool = false
    ) throws -> [RawConnection] {
        let inTheHeaders = "POST /v1/log HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        let inTheBody =
            "POST /v1/log HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: 1000\r\n\r\n{\"logs\":[\""
        var connections: [RawConnection] = []
        for index in 0..<count {
            let connection = try RawConnection(port: port)
            _ = try? connection.send(index.isMultiple(of: 2) && !allInTheBody ? inTheHeaders : inTheBody)
            connections.append(connection)
        }
        return connections
    }

    /// The test itself holds the slow clients' sockets.
    static func raiseOwnOpenFileLimit() throws {
        let raised = OpenFileLimit.raiseToHardLimit()
        try #require(
            raised.after >= 3 * slowClients,
            "this test needs \(3 * slowClients) open files; the hard limit allows \(raised.after)")
    }

    /// The hard limit the test may give a child (it cannot raise its own).
    static func childHardLimit(_ wanted: Int) -> Int { min(wanted, OpenFileLimit.current()) }

    /// `GET /health` on a new connection, answered within `seconds`.
    static func health(port: Int, within seconds: Double) throws -> RawConnection.Answer {
        let connection = try RawConnection(port: port)
        try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return try connection.readResponse(within: seconds)
    }

    @Test func halfSentRequestsUnderTheSystemdLimitLeaveHealthAnswering() async throws {
        try Self.raiseOwnOpenFileLimit()
        let built = try await BuiltProject.make(passCount: 1)
        // Soft and hard 1024: nothing to raise, so the cap is 1024 less 128 of headroom.
        let server = try await ServerProcess(built, arguments: ["--request-timeout", "3600"], openFiles: (1024, 1024))
        let banner = server.stdout.get()
        #expect(banner.contains("connections: at most 896 at once (open-file limit 1024;"), "\(banner)")
        var slow = try Self.halfSentRequests(port: server.port)
        let answer = try Self.health(port: server.port, within: 3)
        #expect(
            answer.status == 200,
            "/health not answered within 3 s behind \(Self.slowClients) half-sent requests: \(answer.text)")
        // The oldest went to make room: at least 1,100 + 1 - 896 of the slow clients are closed.
        let closedEnough = try await eventually(timeout: 10) {
            slow.filter { $0.isReadable() }.count >= Self.slowClients + 1 - 896
        }
        #expect(closedEnough, "\(slow.filter { $0.isReadable() }.count) slow clients closed")
        let registered = try await Client(base: server.base)
            .register("dev1", built.type, "C-0000", token: try await built.token("C-0000"), pushToken: hexToken("c3"))
        #expect(registered.status == 201)
        // The operator's view: the cap, the open connections and what the cap closed.
        let metrics = try await Client(base: server.base).send(.GET, "/metrics").text
        #expect(metrics.contains("passforge_connection_cap 896"), "\(metrics)")
        let closedAtCap =
            metrics.split(separator: "\n")
            .first { $0.hasPrefix(#"passforge_connections_at_cap_total{action="closed"}"#) }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        #expect(closedAtCap >= Double(Self.slowClients + 1 - 896), "\(metrics)")
        #expect(metrics.contains("passforge_connections_open "))
        slow.removeAll()
        #expect(await server.stop() == 0)
        let log = server.stderr.get()
        let warning = "connection cap of 896 reached (--max-connections 896; open-file limit 1024)"
        let warnings = log.components(separatedBy: warning).count - 1
        #expect(warnings == 1, "one warning a minute at most: \(warnings)\n\(log.suffix(2000))")
        #expect(!log.contains(" error passforge"), "\(log.suffix(2000))")
    }

    @Test func theSoftLimitIsRaisedToTheHardLimitAtStart() async throws {
        try Self.raiseOwnOpenFileLimit()
        let hard = Self.childHardLimit(4096)
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built, arguments: ["--request-timeout", "3600"], openFiles: (1024, hard))
        let cap = ConnectionLimit.defaultMaximum(openFileLimit: hard)
        let banner = server.stdout.get()
        #expect(
            banner.contains("connections: at most \(cap) at once (open-file limit raised from 1024 to \(hard);"),
            "\(banner)")
        var slow = try Self.halfSentRequests(port: server.port)
        let answer = try Self.health(port: server.port, within: 3)
        #expect(answer.status == 200, "\(answer.text)")
        slow.removeAll()
        #expect(await server.stop() == 0)
        #expect(!server.stderr.get().contains("connection cap"), "1,100 connections are far below \(cap)")
    }

    @Test func maxConnectionsMustLeaveRoomForTheStoreAndTheTree() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let arguments = [
            "--nofile=1024:1024", passforgeExecutable(), "serve", "--port", "0",
            "--max-connections", "1000",
        ]
        let result = try await runProcessWithoutBlocking(
            "/usr/bin/prlimit", arguments, directory: built.project.root,
            environment: built.environment)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("--max-connections 1000 leaves too few of the 1024 open files"),
            "\(result.output)")
        #expect(result.stderr.contains("at most 960"), "\(result.output)")
    }

    /// Behind the shipped Caddyfile: 1,100 slow unauthenticated `POST /v1/log`
    /// bodies, each of which Caddy streams to passforge on a connection of its
    /// own, do not block a registration.
    @Test func slowLogBodiesThroughCaddyDoNotBlockARegistration() async throws {
        try Self.raiseOwnOpenFileLimit()
        let built = try await BuiltProject.make(passCount: 1)
        let passforge = try await ServerProcess(
            built, arguments: ["--request-timeout", "3600"], openFiles: (1024, 1024))
        let host = try await StaticHost(.caddy, root: built.output, upstreamPort: passforge.port)
        defer { host.terminate() }
        // In the body: Caddy holds a request whose headers have not all come by itself; a body it streams to passforge.
        var slow = try Self.halfSentRequests(port: host.port, allInTheBody: true)
        // Caddy dials passforge for each as it comes: wait until they fill passforge's cap (a scrape on its own port).
        var scraper = Client(base: passforge.base)
        scraper.timeout = .seconds(5)
        let capReached = try await eventually(timeout: 30) {
            let metrics = try? await scraper.send(.GET, "/metrics").text
            return metrics?.contains(#"passforge_connections_at_cap_total{action="closed"}"#) == true
        }
        #expect(capReached, "the slow bodies never filled passforge's 896 connections")
        var client = Client(base: host.base)
        client.timeout = .seconds(10)
        let registered = try await client.register(
            "dev1", built.type, "C-0000", token: try await built.token("C-0000"),
            pushToken: hexToken("c3"))
        #expect(registered.status == 201, "\(registered.text)")
        #expect(try await client.send(.GET, "/health").status == 200)
        slow.removeAll()
        await host.stop()
        #expect(await passforge.stop() == 0)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "1")
    }
}

/// issue 31, item 8: a request for several ranges is answered whole (200), by
/// both static hosts; a single range still gets its 206.
@Suite(.serialized) struct MultipleRangeTests {
    @Test(arguments: [StaticHost.Server.caddy, .nginx])
    func severalRangesAreAnsweredWhole(_ server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let host = try await StaticHost(server, root: built.output, upstreamPort: freeLoopbackPort())
        defer { host.terminate() }
        let record = try built.record("C-0000")
        let whole = try #require(built.fileBytes(record.path))
        let requests: [(path: String, headers: [String: String])] = [
            ("/" + record.path, ["Authorization": "ApplePass \(try await built.token("C-0000"))"]),
            ("/" + record.downloadPath, [:]),
        ]
        for (path, headers) in requests {
            for range in ["bytes=0-1,3-4", "bytes=0-0,2-2,4-4", "bytes=0-1, 0-1", "bytes=-2,0-1"] {
                let answer = try await Client(base: host.base)
                    .send(.GET, path, headers: headers.merging(["Range": range]) { a, _ in a })
                #expect(answer.status == 200, "\(server) \(path) \(range): \(answer.status)")
                #expect(answer.body == whole, "\(server) \(path) \(range)")
                #expect(answer.header("Content-Type")?.contains("multipart") == false, "\(server) \(path) \(range)")
            }
            let single = try await Client(base: host.base)
                .send(.GET, path, headers: headers.merging(["Range": "bytes=0-1"]) { a, _ in a })
            #expect(
                single.status == 206 && single.body == Array(whole.prefix(2)),
                "\(server) \(path): \(single.status)")
        }
    }
}

/// issue 31, item 7: `passforge serve`, nginx and Caddy give the same status to
/// each spelling of the scheme word (exactly `ApplePass` and `AppleOrder`), and
/// every 401 on an order path names `AppleOrder`.
@Suite(.serialized) struct SchemeAgreementTests {
    @Test(arguments: [StaticHost.Server.caddy, .nginx])
    func serveAndTheStaticHostAgreeOnTheSchemeWord(_ server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 1, orders: ["O-1001"])
        let passforge = try await ServerProcess(built)
        let host = try await StaticHost(server, root: built.output, upstreamPort: passforge.port)
        defer { host.terminate() }
        let passToken = try await built.token("C-0000")
        let orderToken = try await built.orderToken("O-1001")
        let passPath = "/v1/passes/\(built.type)/C-0000"
        let orderPath = "/v1/orders/\(built.orderType)/O-1001"
        var cases: [(path: String, authorization: String, status: Int)] = [
            (passPath, "ApplePass \(passToken)", 200), (orderPath, "AppleOrder \(orderToken)", 200),
        ]
        for scheme in ["applepass", "APPLEPASS", "Applepass", "applePass"] {
            cases.append((passPath, "\(scheme) \(passToken)", 401))
        }
        for scheme in ["appleorder", "APPLEORDER", "Appleorder", "appleOrder", "ApplePass"] {
            cases.append((orderPath, "\(scheme) \(orderToken)", 401))
        }
        for (path, authorization, status) in cases {
            let direct = try await Client(base: passforge.base)
                .send(.GET, path, headers: ["Authorization": authorization])
            let viaHost = try await Client(base: host.base).send(.GET, path, headers: ["Authorization": authorization])
            #expect(
                direct.status == status && viaHost.status == status,
                "\(server) \(path) '\(authorization)': \(direct.status) \(viaHost.status)")
            if status == 401 {
                #expect(viaHost.body == direct.body, "\(server) \(path) '\(authorization)'")
                #expect(viaHost.header("WWW-Authenticate") == direct.header("WWW-Authenticate"))
            }
            if path == orderPath, status == 401 {
                #expect(
                    direct.header("WWW-Authenticate") == "AppleOrder" && !direct.text.contains("ApplePass"),
                    "\(direct.text)")
            }
        }
        // Registration of an order through the host, without a token or with the pass scheme: the order's 401.
        let registration = "/v1/devices/0a1b2c3d/registrations/\(built.orderType)/O-1001"
        let body = Array(#"{"pushToken":"\#(hexToken("c3"))"}"#.utf8)
        for authorization in [nil, "ApplePass \(orderToken)", "appleorder \(orderToken)"] {
            var headers = ["Content-Type": "application/json"]
            headers["Authorization"] = authorization
            let answer = try await Client(base: host.base).send(.POST, registration, headers: headers, body: body)
            #expect(
                answer.status == 401 && answer.header("WWW-Authenticate") == "AppleOrder",
                "\(server) \(authorization ?? "no token"): \(answer.text)")
            #expect(answer.text.contains("AppleOrder") && !answer.text.contains("ApplePass"), "\(answer.text)")
        }
    }
}
