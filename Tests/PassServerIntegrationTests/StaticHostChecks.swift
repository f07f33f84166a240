import Foundation
import NIOCore
import NIOHTTP1
import PassBuild
import PassModel
import TestSupport
import Testing
import WalletTree

/// The checks every shipped static-host configuration must pass, the same
/// for nginx and Caddy: the host answers every GET from the built tree by
/// itself (passes and orders by their token-keyed names, index files,
/// downloads) and sends only registrations, the log and /health to
/// `passforge serve`.
struct StaticHostChecks {
    let built: BuiltProject
    let host: StaticHost
    var client: Client { Client(base: host.base) }
    var type: String { built.type }

    /// Scenario 1: no `passforge serve` at all (the upstream port is closed).
    static func withoutPassforge(_ server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 2, orders: orders)
        let host = try await StaticHost(server, root: built.output, upstreamPort: freeLoopbackPort())
        defer { host.terminate() }
        let checks = StaticHostChecks(built: built, host: host)
        try await checks.itemsAreServedByToken(.pass)
        try await checks.everyRefusalIsTheSame401()
        try await checks.ordersAreServedByToken()
        try await checks.everyOrderRefusalIsTheSame401()
        try await checks.indexFilesAreServed(device: "0a1b2c3d4e5f")
        try await checks.downloadsAreServed()
        try await checks.nothingElseIsServed()
        try await checks.otherMethodsAreRefused()
        try await checks.changesFailWithoutPassforge()
    }

    /// Scenario 2: registrations, the log and /health reach a running
    /// `passforge serve`; once it is stopped, every GET still answers.
    static func withPassforgeStoppedHalfWay(_ server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 2, orders: orders)
        let passforge = try await ServerProcess(built)
        let host = try await StaticHost(server, root: built.output, upstreamPort: passforge.port)
        defer { host.terminate() }
        let checks = StaticHostChecks(built: built, host: host)
        let client = checks.client
        let type = built.type
        let device = "1a2b3c4d5e6f7a8b9c0d"
        let token0 = try await built.token("C-0000")
        let token1 = try await built.token("C-0001")
        let record0 = try built.record("C-0000")

        // Register and unregister go through to passforge; the list is the index file it wrote.
        #expect(try await client.serials(device, type).status == 204)
        #expect(
            try await client.register(device, type, "C-0000", token: token0, pushToken: ServeEndToEndTests.pushA).status
                == 201)
        #expect(
            try await client.register(device, type, "C-0001", token: token1, pushToken: ServeEndToEndTests.pushA).status
                == 201)
        #expect(try await client.unregister(device, type, "C-0001", token: token1).status == 200)
        // passforge's own refusals pass through unchanged.
        #expect(
            try await client.register(device, type, "C-0001", token: token0, pushToken: ServeEndToEndTests.pushA).status
                == 401)
        let list = try await client.serials(device, type)
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.json?["serialNumbers"] as? [String] == ["C-0000"])
        #expect(list.json?["lastUpdated"] as? String == String(record0.updateTag))

        // The host's Last-Modified is passforge's: the build sets the file's mtime to the update tag.
        let direct = try await Client(base: passforge.base).pass(type, "C-0000", token: token0)
        let viaHost = try await client.pass(type, "C-0000", token: token0)
        #expect(direct.status == 200 && viaHost.status == 200)
        #expect(viaHost.header("Last-Modified") == direct.header("Last-Modified"))
        #expect(viaHost.body == direct.body)

        // The same for an order: registered through the host, listed by the index file, served as passforge serves it.
        let orderType = built.orderType
        let orderToken = try await built.orderToken("O-1001")
        #expect(try await client.orderIdentifiers(device, orderType).status == 204)
        #expect(
            try await client.registerOrder(
                device, orderType, "O-1001", token: orderToken, pushToken: ServeEndToEndTests.pushA
            ).status == 201)
        #expect(
            try await client.registerOrder(
                device, orderType, "O-1001", token: orderToken, pushToken: ServeEndToEndTests.pushA,
                scheme: "ApplePass"
            ).status == 401)
        let orderList = try await client.orderIdentifiers(device, orderType)
        #expect(orderList.status == 200)
        #expect(orderList.json?["orderIdentifiers"] as? [String] == ["O-1001"])
        #expect(orderList.json?["lastModified"] as? String == String(try built.orderRecord("O-1001").updateTag))
        let directOrder = try await Client(base: passforge.base).order(orderType, "O-1001", token: orderToken)
        let orderViaHost = try await client.order(orderType, "O-1001", token: orderToken)
        #expect(directOrder.status == 200 && orderViaHost.status == 200)
        #expect(orderViaHost.header("Last-Modified") == directOrder.header("Last-Modified"))
        #expect(orderViaHost.header("Content-Type") == directOrder.header("Content-Type"))
        #expect(orderViaHost.body == directOrder.body)
        // The host's 401s are passforge's, byte for byte.
        let directRefusal = try await Client(base: passforge.base).order(orderType, "O-1001", token: nil)
        let hostRefusal = try await client.order(orderType, "O-1001", token: nil)
        #expect(hostRefusal.status == 401 && hostRefusal.body == directRefusal.body)
        #expect(hostRefusal.header("WWW-Authenticate") == directRefusal.header("WWW-Authenticate"))

        // Log and health reach passforge.
        let log = try await client.send(
            .POST, "/v1/log", headers: ["Content-Type": "application/json"],
            body: Array(#"{"logs":["via the static host"]}"#.utf8))
        #expect(log.status == 200)
        #expect(try await client.send(.GET, "/health").status == 200)

        // passforge stops: every GET still answers, from the tree alone.
        await passforge.stop()
        try await checks.itemsAreServedByToken(.pass)
        try await checks.everyRefusalIsTheSame401()
        try await checks.ordersAreServedByToken()
        try await checks.everyOrderRefusalIsTheSame401()
        #expect(try await client.orderIdentifiers(device, orderType).body == orderList.body)
        let stillListed = try await client.serials(device, type)
        #expect(stillListed.status == 200)
        #expect(stillListed.body == list.body)
        #expect(try await client.serials("ffff0000", type).status == 204)
        try await checks.downloadsAreServed()
        try await checks.nothingElseIsServed()
        try await checks.changesFailWithoutPassforge()

        await host.stop()
        #expect(try await built.sql("SELECT COUNT(*) FROM device_logs") == "1")
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "2")
    }

    /// Scenario 3 (issue 24): a tokenless DELETE asking to upgrade the
    /// connection (`Connection: Upgrade`, `Upgrade: h2c`) must not stall the
    /// next client, whose request the host may send on the same upstream
    /// connection. Each registration and log call after such a request is
    /// answered at once: the client gives up after 10 s, far less than the
    /// 30 s after which passforge would end a connection it stopped reading
    /// (with a 408), so a stalled call fails the test instead of passing late.
    static func upgradeRequestsDoNotStallTheNextClient(_ server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let passforge = try await ServerProcess(built)
        let host = try await StaticHost(server, root: built.output, upstreamPort: passforge.port)
        defer { host.terminate() }
        var client = Client(base: host.base)
        client.timeout = .seconds(10)
        let type = built.type
        let device = "1a2b3c4d5e6f7a8b9c0d"
        for serial in ["C-0000", "C-0001"] {
            for upgrade in ["h2c", "websocket"] {
                let attacker = try RawConnection(port: host.port)
                try attacker.send(
                    "DELETE /v1/devices/\(device)/registrations/\(type)/\(serial) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Connection: Upgrade\r\nUpgrade: \(upgrade)\r\n\r\n")
                let refused = try attacker.readResponse(within: 10)
                #expect(refused.status == 401, "\(server) \(upgrade): \(refused.text)")
                let registered: Client.Answer
                do {
                    registered = try await client.register(
                        device, type, serial, token: try await built.token(serial), pushToken: ServeEndToEndTests.pushA)
                } catch {
                    Issue.record(
                        "\(server): the registration after an `Upgrade: \(upgrade)` request was not answered: \(error)")
                    continue
                }
                #expect(
                    [200, 201].contains(registered.status),
                    "\(server) \(upgrade) \(serial): \(registered.status) \(registered.text)")
                let logged = try? await client.send(
                    .POST, "/v1/log", headers: ["Content-Type": "application/json"],
                    body: Array(#"{"logs":["after an upgrade request"]}"#.utf8))
                #expect(
                    logged?.status == 200,
                    "\(server) \(upgrade): the log call after an upgrade request was not answered")
            }
        }
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "2")
    }

    /// 200 with the item's bytes and its kind's MIME type for its token under its kind's scheme, HEAD
    /// alike, and 304 by ETag and by If-Modified-Since: passes, then (`kind` order) orders, one code path.
    func itemsAreServedByToken(_ kind: WalletItemKind) async throws {
        for identifier in kind == .pass ? ["C-0000", "C-0001"] : Self.orders {
            let token = kind == .pass ? try await built.token(identifier) : try await built.orderToken(identifier)
            let record = kind == .pass ? try built.record(identifier) : try built.orderRecord(identifier)
            func get(_ method: HTTPMethod = .GET, _ headers: [String: String] = [:]) async throws -> Client.Answer {
                try await client.send(
                    method, "/" + record.path,
                    headers: headers.merging(["Authorization": "\(kind.authorizationScheme) \(token)"]) { a, _ in a })
            }
            let item = try await get()
            #expect(item.status == 200, "\(host.server) \(identifier)")
            #expect(item.body == built.fileBytes(record.path))
            #expect(item.header("Content-Type") == kind.mediaType)
            #expect(item.header("Cache-Control") == "private, no-cache")
            let etag = try #require(item.header("ETag"))
            let lastModified = try #require(item.header("Last-Modified"))
            #expect(
                lastModified == HTTPDateText.format(milliseconds: record.updateTag), "Last-Modified is the update tag")

            let head = try await get(.HEAD)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("ETag") == etag)

            let byETag = try await get(.GET, ["If-None-Match": etag])
            #expect(byETag.status == 304)
            #expect(byETag.body.isEmpty)
            #expect(try await get(.GET, ["If-Modified-Since": lastModified]).status == 304)
            // Not a blanket 304: another ETag, or an older date, gets the item.
            #expect(try await get(.GET, ["If-None-Match": #""not-this-one""#]).status == 200)
            #expect(try await get(.GET, ["If-Modified-Since": "Thu, 01 Jan 2015 00:00:00 GMT"]).status == 200)
        }
    }

    /// No, malformed, wrong or another pass's token, or an unknown pass: one and the same 401, no bytes.
    func everyRefusalIsTheSame401() async throws {
        let token0 = try await built.token("C-0000")
        let token1 = try await built.token("C-0001")
        let reference = try await client.pass(type, "C-0000", token: nil)
        #expect(reference.status == 401)
        let refusals: [(serial: String, authorization: String?)] = [
            ("C-0000", "ApplePass not-the-token-at-all"),
            ("C-0000", "ApplePass \(token1)"),
            ("C-9999", "ApplePass \(token0)"),
            ("C-0000", "ApplePass ../../x"),
            ("C-0000", "ApplePass ../../../../../.passforge/state.json"),
            ("C-0000", "ApplePass ..%2f..%2fv1%2fpasses%2f\(type)%2fC-0000"),
            ("C-0000", "applepass \(token0)"),
            ("C-0000", "APPLEPASS \(token0)"),
            ("C-0000", "ApplePass  \(token0)"),
            ("C-0000", "ApplePass\(token0)"),
            ("C-0000", "Bearer \(token0)"),
            ("C-0000", "Basic ApplePass \(token0)"),
            ("C-0000", "\(token0)"),
            ("C-0000", "ApplePass \(token0) \(token0)"),
            ("C-0000", "ApplePass \(token0).x"),
            ("C-0000", "ApplePass \(token0)\(token0)\(token0)"),
            ("C-0000", "ApplePass \(token0.prefix(15))"),
            ("C-0000", "ApplePass "),
            ("C-0000.\(token0)", "ApplePass \(token0)"),
        ]
        for (serial, authorization) in refusals {
            let answer = try await client.send(
                .GET, "/v1/passes/\(type)/\(serial)", headers: authorization.map { ["Authorization": $0] } ?? [:])
            #expect(answer.status == 401, "\(host.server) \(serial) \(authorization ?? "no header")")
            #expect(answer.body == reference.body, "\(host.server) \(serial) \(authorization ?? "no header")")
            #expect(answer.header("Content-Type") == reference.header("Content-Type"))
            #expect(answer.body.firstRange(of: Array("PK".utf8)) == nil)
        }
        let head = try await client.send(
            .HEAD, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "ApplePass \(token1)"])
        #expect(head.status == 401)
        #expect(head.body.isEmpty)
        // A malformed type or serial, or none: the same 401.
        for path in [
            "/v1/passes/\(type)", "/v1/passes/\(type)/C-0000/more", "/v1/passes/-bad/C-0000",
            "/v1/passes/\(type)/~C-0000",
        ] {
            let answer = try await client.send(.GET, path, headers: ["Authorization": "ApplePass \(token0)"])
            #expect(answer.status == 401, "\(host.server) \(path)")
            #expect(answer.body == reference.body, "\(host.server) \(path)")
        }
    }

    /// The orders of both scenarios.
    static let orders = ["O-1001", "O-1002"]

    /// Orders as passes (`itemsAreServedByToken(.order)`), and their Add-to-Wallet link with the order MIME type.
    func ordersAreServedByToken() async throws {
        try await itemsAreServedByToken(.order)
        let record = try built.orderRecord("O-1001")
        let download = try await client.send(.GET, "/" + record.downloadPath)
        #expect(download.status == 200, "\(host.server) \(record.downloadPath)")
        #expect(download.header("Content-Type") == "application/vnd.apple.finance.order")
        #expect(download.body == built.fileBytes(record.path))
    }

    /// No, malformed, wrong or another order's token, the pass scheme, an unknown order, or a pass
    /// asked for as an order: one and the same 401 (AppleOrder), no bytes. An order asked for as a
    /// pass gets the pass's 401.
    func everyOrderRefusalIsTheSame401() async throws {
        let orderType = built.orderType
        let token1 = try await built.orderToken("O-1001")
        let token2 = try await built.orderToken("O-1002")
        let passToken = try await built.token("C-0000")
        let reference = try await client.order(orderType, "O-1001", token: nil)
        #expect(reference.status == 401)
        #expect(reference.header("WWW-Authenticate") == "AppleOrder")
        let refusals: [(path: String, authorization: String?)] = [
            ("/v1/orders/\(orderType)/O-1001", "AppleOrder \(token2)"),
            ("/v1/orders/\(orderType)/O-1001", "AppleOrder not-the-token-at-all"),
            ("/v1/orders/\(orderType)/O-1001", "ApplePass \(token1)"),
            ("/v1/orders/\(orderType)/O-1001", "appleorder \(token1)"),
            ("/v1/orders/\(orderType)/O-1001", "AppleOrder  \(token1)"),
            ("/v1/orders/\(orderType)/O-1001", "AppleOrder \(token1) \(token1)"),
            ("/v1/orders/\(orderType)/O-1001", "AppleOrder ../../x"),
            ("/v1/orders/\(orderType)/O-9999", "AppleOrder \(token1)"),
            ("/v1/orders/\(orderType)/O-1001.\(token1)", "AppleOrder \(token1)"),
            ("/v1/orders/\(orderType)", "AppleOrder \(token1)"),
            ("/v1/orders/\(orderType)/O-1001/more", "AppleOrder \(token1)"),
            ("/v1/orders/-bad/O-1001", "AppleOrder \(token1)"),
            // A pass is not an order, whatever the scheme.
            ("/v1/orders/\(type)/C-0000", "AppleOrder \(passToken)"),
            ("/v1/orders/\(type)/C-0000", "ApplePass \(passToken)"),
        ]
        for (path, authorization) in refusals {
            let answer = try await client.send(.GET, path, headers: authorization.map { ["Authorization": $0] } ?? [:])
            #expect(answer.status == 401, "\(host.server) \(path) \(authorization ?? "no header")")
            #expect(answer.body == reference.body, "\(host.server) \(path) \(authorization ?? "no header")")
            #expect(answer.header("WWW-Authenticate") == "AppleOrder", "\(host.server) \(path)")
            #expect(answer.body.firstRange(of: Array("PK".utf8)) == nil)
        }
        // An order is not a pass: the pass URL gives the pass's 401, whatever the scheme.
        let passReference = try await client.pass(type, "C-0000", token: nil)
        for authorization in ["ApplePass \(token1)", "AppleOrder \(token1)"] {
            let answer = try await client.send(
                .GET, "/v1/passes/\(orderType)/O-1001", headers: ["Authorization": authorization])
            #expect(answer.status == 401, "\(host.server) \(authorization)")
            #expect(answer.body == passReference.body, "\(host.server) \(authorization)")
        }
        for method in [HTTPMethod.DELETE, .PUT, .POST] {
            let answer = try await client.send(
                method, "/v1/orders/\(orderType)/O-1001", headers: ["Authorization": "AppleOrder \(token1)"])
            #expect(answer.status == 405, "\(host.server) \(method)")
            #expect(answer.header("Allow") != nil)
        }
    }

    /// An index file is served as JSON; a device without one gets 204.
    func indexFilesAreServed(device: String) async throws {
        #expect(try await client.serials(device, type).status == 204)
        let index = #"{"lastUpdated":"1","serialNumbers":["C-0000"]}"#
        built.project.directory.write("output/" + TreeLayout.deviceIndexPath(device: device, type: type), index)
        let list = try await client.serials(device, type)
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.text == index)
        // passesUpdatedSince is for passforge serve; a static file ignores it.
        #expect(try await client.serials(device, type, since: "1").status == 200)
        #expect(try await client.serials(device, "pass.example.other").status == 204)
    }

    /// Add-to-Wallet links need no token; a `.pkpasses` bundle gets its own type.
    func downloadsAreServed() async throws {
        let record0 = try built.record("C-0000")
        let download = try await client.send(.GET, "/" + record0.downloadPath)
        #expect(download.status == 200, "\(host.server) \(record0.downloadPath)")
        #expect(download.body == built.fileBytes(record0.path))
        #expect(download.header("Content-Type") == "application/vnd.apple.pkpass")
        #expect(try await client.send(.HEAD, "/" + record0.downloadPath).status == 200)
        built.project.directory.write("output/download/bundle-test.pkpasses", bytes: Array("PK-bundle".utf8))
        let bundle = try await client.send(.GET, "/download/bundle-test.pkpasses")
        #expect(bundle.status == 200)
        #expect(bundle.header("Content-Type") == "application/vnd.apple.pkpasses")
        #expect(try await client.send(.GET, "/download/no-such-link.pkpass").status == 404)
    }

    /// The build state, by-token/ by its own URL, dotfiles, metrics and
    /// folders are never served, however the path is spelled.
    func nothingElseIsServed() async throws {
        let token0 = try await built.token("C-0000")
        let record0 = try built.record("C-0000")
        let tokenPath = try #require(record0.tokenPath)
        built.project.directory.write("output/download/.hidden.pkpass", bytes: Array("PK-hidden".utf8))
        built.project.directory.write("output/.secret", "secret-dotfile")
        let never = [
            "/.passforge/state.json", "/.passforge/downloads.csv", "/.passforge/", "/.passforge", "/.secret",
            "/download/.hidden.pkpass", "/metrics", "/" + tokenPath, "/by-token/\(type)/C-0000",
            "/v1/passes/\(type)/C-0000.\(token0)",
            // Folders: never a listing.
            "/", "/v1/", "/v1/passes/", "/v1/passes/\(type)/", "/by-token/", "/by-token/\(type)/", "/by-token/\(type)",
            "/download/", "/download", "/v1/devices/", "/v1/devices/1a2b3c4d5e6f7a8b9c0d/registrations/",
            "/v1/orders/", "/v1/orders/\(built.orderType)/", "/by-token/\(built.orderType)/",
            "/" + (try built.orderRecord("O-1001").tokenPath ?? "by-token/x"),
            // Traversal, encoded or not.
            "/v1/passes/\(type)/..%2f..%2f.passforge%2fstate.json",
            "/v1/passes/\(type)/..%2F..%2F..%2F\(tokenPath.replacingOccurrences(of: "/", with: "%2F"))",
            "/v1/passes/%2e%2e/%2e%2e/\(tokenPath)",
            "/v1/devices/../.passforge/state.json",
            "/v1/devices/x/registrations/..%2f..%2f..%2f.passforge%2fstate.json",
            "/download/..%2f.passforge/state.json",
            "/download/%2e%2e/.passforge/state.json",
            "/download/..%2f\(tokenPath.replacingOccurrences(of: "/", with: "%2f"))",
            "/download/../\(tokenPath)",
            "/download/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
            "//.passforge/state.json",
            "/./.passforge/state.json",
        ]
        for path in never {
            let answer = try RawHTTP.send(
                port: host.port,
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ApplePass \(token0)\r\nConnection: close\r\n\r\n"
            )
            #expect([400, 401, 404].contains(answer.status), "\(host.server) \(path): \(answer.status)")
            for leak in [
                "lastUpdateTag", "PK\u{3}\u{4}", "PK-hidden", "secret-dotfile", "root:x:0", "C-0000", "Index of",
                "href=",
            ] {
                #expect(!answer.response.contains(leak), "\(host.server) \(path) leaks \(leak)")
            }
        }
    }

    /// Methods a route does not take: 405.
    func otherMethodsAreRefused() async throws {
        let token0 = try await built.token("C-0000")
        let device = "1a2b3c4d5e6f7a8b9c0d"
        let refused: [(HTTPMethod, String)] = [
            (.DELETE, "/v1/passes/\(type)/C-0000"), (.PUT, "/v1/passes/\(type)/C-0000"),
            (.POST, "/v1/passes/\(type)/C-0000"),
            (.GET, "/v1/devices/\(device)/registrations/\(type)/C-0000"),
            (.PUT, "/v1/devices/\(device)/registrations/\(type)/C-0000"),
            (.POST, "/v1/devices/\(device)/registrations/\(type)"),
            (.DELETE, "/v1/devices/\(device)/registrations/\(type)"),
            (.GET, "/v1/log"), (.POST, "/" + (try built.record("C-0000")).downloadPath),
        ]
        for (method, path) in refused {
            let answer = try await client.send(method, path, headers: ["Authorization": "ApplePass \(token0)"])
            #expect(answer.status == 405, "\(host.server) \(method) \(path)")
            #expect(answer.header("Allow") != nil, "\(host.server) \(method) \(path)")
        }
    }

    /// Only what changes state needs passforge: without it, 502.
    func changesFailWithoutPassforge() async throws {
        let token0 = try await built.token("C-0000")
        let device = "9f8e7d6c5b4a"
        #expect(
            try await client.register(device, type, "C-0000", token: token0, pushToken: ServeEndToEndTests.pushA).status
                == 502)
        #expect(try await client.unregister(device, type, "C-0000", token: token0).status == 502)
        #expect(
            try await client.send(
                .POST, "/v1/log", headers: ["Content-Type": "application/json"], body: Array(#"{"logs":["x"]}"#.utf8)
            ).status == 502)
        #expect(try await client.send(.GET, "/health").status == 502)
    }
}

/// An HTTP-date (RFC 9110) for an update tag in milliseconds since 1970, whole seconds.
enum HTTPDateText {
    static func format(milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)))
    }
}
