import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PassBuild
import PassServer
import TestSupport
import Testing
import WalletTree

/// The real `passforge serve` process over a tree built by the real
/// `passforge build`, with a real SQLite file, driven by AsyncHTTPClient.
@Suite(.serialized) struct ServeEndToEndTests {
    static let pushA = hexToken("a1")
    static let pushB = hexToken("b2")

    @Test(arguments: Backend.allCases) func aDeviceLifeCycle(backend: Backend) async throws {
        let built = try await BuiltProject.make(passCount: 3)
        try backend.configure(built)
        var server = try await ServerProcess(built)
        var client = Client(base: server.base)
        let type = built.type
        let device = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
        let token0 = try await built.token("C-0000")
        let token1 = try await built.token("C-0001")

        #expect(try await client.send(.GET, "/health").status == 200)

        // Register: 201, then 200 for the same registration.
        #expect(try await client.register(device, type, "C-0000", token: token0, pushToken: Self.pushA).status == 201)
        #expect(try await client.register(device, type, "C-0000", token: token0, pushToken: Self.pushA).status == 200)
        #expect(try await client.register(device, type, "C-0001", token: token1, pushToken: Self.pushA).status == 201)

        // The list: every registered pass, lastUpdated the greatest tag.
        let record0 = try built.record("C-0000")
        let record1 = try built.record("C-0001")
        let list = try await client.serials(device, type)
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.json?["serialNumbers"] as? [String] == ["C-0000", "C-0001"])
        let lastUpdated = try #require(list.json?["lastUpdated"] as? String)
        #expect(lastUpdated == String(max(record0.updateTag, record1.updateTag)))
        #expect(try await client.serials(device, type, since: lastUpdated).status == 204)
        #expect(
            try await client.serials(device, type, since: "not-a-number").json?["serialNumbers"] as? [String] == [
                "C-0000", "C-0001",
            ])

        // The index file in the tree says the same, for a static host.
        let indexPath = TreeLayout.deviceIndexPath(device: device, type: type)
        #expect(built.fileBytes(indexPath).map { String(decoding: $0, as: UTF8.self) } == list.text)

        // Download: the file's bytes, the build's ETag, the tag's time.
        let download = try await client.pass(type, "C-0001", token: token1)
        #expect(download.status == 200)
        #expect(download.body == built.fileBytes(record1.path))
        #expect(download.header("Content-Type") == "application/vnd.apple.pkpass")
        #expect(download.header("ETag") == record1.etag)
        let lastModified = try #require(download.header("Last-Modified"))
        #expect(lastModified == HTTPDate.format(record1.updateTag / 1000))

        // Conditional download: 304 by ETag (strong, weak, in a list, *) and by each date form.
        for ifNoneMatch in [record1.etag, "W/" + record1.etag, "\"nope\", " + record1.etag, "*"] {
            let answer = try await client.pass(type, "C-0001", token: token1, headers: ["If-None-Match": ifNoneMatch])
            #expect(answer.status == 304, "\(ifNoneMatch)")
            #expect(answer.body.isEmpty)
            #expect(answer.header("ETag") == record1.etag)
        }
        let seconds = try #require(HTTPDate.parse(lastModified))
        for form in Self.dateForms(seconds) {
            #expect(
                try await client.pass(type, "C-0001", token: token1, headers: ["If-Modified-Since": form]).status
                    == 304, "\(form)")
        }
        for form in Self.dateForms(seconds - 1) {
            #expect(
                try await client.pass(type, "C-0001", token: token1, headers: ["If-Modified-Since": form]).status
                    == 200, "\(form)")
        }
        #expect(
            try await client.pass(type, "C-0001", token: token1, headers: ["If-None-Match": "\"nope\""]).status == 200)

        // HEAD: the headers of a GET, no body.
        let head = try await client.send(
            .HEAD, "/v1/passes/\(type)/C-0001", headers: ["Authorization": "ApplePass \(token1)"])
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(record1.size))
        #expect(head.body.isEmpty)

        // An editor changes one pass; CI rebuilds; the server notices without a restart.
        built.project.writeList(count: 3, points: { $0 == 1 ? 500 : $0 })
        try await built.build()
        let newRecord1 = try built.record("C-0001")
        #expect(newRecord1.updateTag > record1.updateTag)
        #expect(try built.record("C-0000").updateTag == record0.updateTag)
        var changed: Client.Answer?
        #expect(
            try await eventually {
                changed = try await client.serials(device, type, since: lastUpdated)
                return changed?.status == 200
            })
        #expect(changed?.json?["serialNumbers"] as? [String] == ["C-0001"])
        #expect(changed?.json?["lastUpdated"] as? String == String(newRecord1.updateTag))

        // The device fetches the new bytes with its old ETag.
        let updated = try await client.pass(type, "C-0001", token: token1, headers: ["If-None-Match": record1.etag])
        #expect(updated.status == 200)
        #expect(updated.body == built.fileBytes(newRecord1.path))
        #expect(updated.body != download.body)
        #expect(updated.header("ETag") == newRecord1.etag)
        #expect(
            try await client.pass(type, "C-0000", token: token0, headers: ["If-None-Match": record0.etag]).status == 304
        )

        // A new push token on re-registering replaces the old one.
        #expect(try await client.register(device, type, "C-0000", token: token0, pushToken: Self.pushB).status == 200)
        #expect(
            try await built.sql("SELECT push_token FROM devices WHERE library_identifier = '\(device)'") == Self.pushB)

        // Restarting loses nothing.
        #expect(await server.stop() == 0)
        server = try await ServerProcess(built)
        client = Client(base: server.base)
        #expect(try await client.serials(device, type).json?["serialNumbers"] as? [String] == ["C-0000", "C-0001"])

        // Unregister: 200, also when not registered; the device goes with its last pass.
        #expect(try await client.unregister(device, type, "C-0000", token: token0).status == 200)
        #expect(try await client.unregister(device, type, "C-0000", token: token0).status == 200)
        #expect(try await client.serials(device, type).json?["serialNumbers"] as? [String] == ["C-0001"])
        #expect(try await client.unregister(device, type, "C-0001", token: token1).status == 200)
        #expect(try await client.serials(device, type).status == 204)
        #expect(try await built.sql("SELECT COUNT(*) FROM devices") == "0")
        #expect(!FileManager.default.fileExists(atPath: "\(built.output)/\(indexPath)"))

        // Log: 200, one line each in the server log, kept in the table.
        let log = try await client.send(
            .POST, "/v1/log", headers: ["Content-Type": "application/json"],
            body: Array(#"{"logs":["Web service error for pass.x (C-0001): 401\nforged line","second"]}"#.utf8))
        #expect(log.status == 200)
        #expect(await server.process.contains("device log: second", timeout: .seconds(10)))
        #expect(server.stderr.get().contains("device log: Web service error for pass.x (C-0001): 401 forged line"))
        #expect(try await built.sql("SELECT COUNT(*) FROM device_logs") == "2")

        #expect(await server.stop() == 0)
        for token in [token0, token1] {
            #expect(!server.stderr.get().contains(token))
            #expect(!server.stdout.get().contains(token))
        }
    }

    /// IMF-fixdate, RFC 850 and asctime forms of one time.
    static func dateForms(_ seconds: Int64) -> [String] {
        let imf = HTTPDate.format(seconds)  // "Sun, 06 Nov 1994 08:49:37 GMT"
        let parts = imf.split(separator: " ")
        let weekday = [
            "Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday",
            "Sat": "Saturday", "Sun": "Sunday",
        ][String(parts[0].dropLast())]!
        let rfc850 = "\(weekday), \(parts[1])-\(parts[2])-\(parts[3].suffix(2)) \(parts[4]) GMT"
        let day = Int(parts[1])!
        let asctime = "\(parts[0].dropLast()) \(parts[2]) \(day < 10 ? " \(day)" : "\(day)") \(parts[4]) \(parts[3])"
        return [imf, rfc850, asctime]
    }

    @Test func everyBadRequestGetsAShortJSON4xx() async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let token = try await built.token("C-0000")
        let otherToken = try await built.token("C-0001")
        let registration = "/v1/devices/dev1/registrations/\(type)/C-0000"
        let auth = ["Authorization": "ApplePass \(token)"]
        var answers: [(String, Client.Answer)] = []
        func expect(
            _ status: Int, _ method: HTTPMethodName, _ path: String, headers: [String: String] = [:],
            body: [UInt8]? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let answer = try await client.send(method.nio, path, headers: headers, body: body)
            #expect(answer.status == status, "\(method) \(path)", sourceLocation: sourceLocation)
            answers.append(("\(method) \(path)", answer))
        }

        // 401: missing, malformed, wrong, another pass's, unknown pass — one answer for all.
        try await expect(401, .GET, "/v1/passes/\(type)/C-0000")
        try await expect(401, .GET, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "Bearer \(token)"])
        try await expect(401, .GET, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "ApplePass"])
        try await expect(
            401, .GET, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "ApplePass wrong-token-0123456789"])
        try await expect(401, .GET, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "ApplePass \(otherToken)"])
        try await expect(401, .GET, "/v1/passes/\(type)/C-9999", headers: auth)
        try await expect(401, .GET, "/v1/passes/pass.com.example.unknown/C-0000", headers: auth)
        let unauthorized = answers.suffix(7).map(\.1)
        #expect(Set(unauthorized.map(\.text)).count == 1, "an unknown pass answers exactly like a wrong token")
        try await expect(
            401, .POST, registration, headers: ["Authorization": "ApplePass \(otherToken)"],
            body: Array(#"{"pushToken":"\#(Self.pushA)"}"#.utf8))
        try await expect(
            401, .POST, "/v1/devices/dev1/registrations/\(type)/C-9999", headers: auth,
            body: Array(#"{"pushToken":"\#(Self.pushA)"}"#.utf8))
        try await expect(401, .DELETE, registration)
        try await expect(401, .DELETE, registration, headers: ["Authorization": "ApplePass \(otherToken)"])

        // 400: the body of a registration.
        try await expect(400, .POST, registration, headers: auth)
        try await expect(400, .POST, registration, headers: auth, body: Array("{}".utf8))
        try await expect(400, .POST, registration, headers: auth, body: Array(#"{"pushToken":""}"#.utf8))
        try await expect(
            400, .POST, registration, headers: auth,
            body: Array(#"{"pushToken":"not hex at all, not hex at all, not hex"}"#.utf8))
        try await expect(400, .POST, registration, headers: auth, body: Array(#"{"pushToken":12}"#.utf8))
        try await expect(400, .POST, registration, headers: auth, body: Array(#"{"pushToken":"abc"#.utf8))
        try await expect(400, .POST, registration, headers: auth, body: Array("[1,2]".utf8))
        try await expect(400, .POST, registration, headers: auth, body: [0xFF, 0xFE, 0x00])
        try await expect(400, .POST, "/v1/log", body: Array("not json".utf8))
        try await expect(400, .POST, "/v1/log", body: Array(#"{"logs":"one"}"#.utf8))
        // 400: path parameters that break their patterns.
        try await expect(400, .GET, "/v1/devices/\(String(repeating: "a", count: 65))/registrations/\(type)")
        try await expect(400, .GET, "/v1/devices/dev-1/registrations/\(type)")
        try await expect(400, .POST, "/v1/devices/dev1/registrations/\(type)/-bad", headers: auth)
        try await expect(400, .GET, "/v1/passes/pass..x/C-0000", headers: auth)
        try await expect(400, .GET, "/v1/passes/\(type)/\(String(repeating: "9", count: 129))", headers: auth)

        // 413: bodies are bounded.
        try await expect(
            413, .POST, registration, headers: auth,
            body: Array(#"{"pushToken":"\#(Self.pushA)","padding":"\#(String(repeating: "x", count: 8000))"}"#.utf8))
        try await expect(
            413, .POST, "/v1/log", body: Array(#"{"logs":["\#(String(repeating: "x", count: 70_000))"]}"#.utf8))

        // 405: wrong methods, with Allow.
        try await expect(405, .PUT, "/v1/passes/\(type)/C-0000", headers: auth)
        try await expect(405, .DELETE, "/v1/passes/\(type)/C-0000", headers: auth)
        try await expect(405, .GET, registration, headers: auth)
        try await expect(405, .POST, "/v1/devices/dev1/registrations/\(type)")
        try await expect(405, .GET, "/v1/log")
        try await expect(405, .DELETE, "/health")
        #expect(answers.last?.1.header("Allow") == "GET, HEAD")

        // 404: nothing there.
        try await expect(404, .GET, "/")
        try await expect(404, .GET, "/v1/passes/\(type)")
        try await expect(404, .GET, "/v2/passes/\(type)/C-0000")
        try await expect(404, .GET, "/download/AAAAAAAAAAAAAAAAAAAAAA.pkpass")
        try await expect(404, .GET, "/download/state.json")

        for (request, answer) in answers {
            #expect(answer.header("Content-Type") == "application/json", "\(request)")
            #expect(answer.json?["error"] is String, "\(request): \(answer.text)")
            #expect(answer.body.count < 200, "\(request)")
            #expect(!answer.text.contains(token) && !answer.text.contains(otherToken), "\(request)")
        }
        // Nothing was stored, no index written.
        #expect(try await built.sql("SELECT COUNT(*) FROM devices") == "0")
        #expect(!FileManager.default.fileExists(atPath: "\(built.output)/v1/devices"))
        #expect(await server.stop() == 0)
        #expect(!server.stderr.get().contains(token) && !server.stderr.get().contains(otherToken))
    }

    @Test func pathTraversalNeverReturnsAFile() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built)
        let type = built.type
        let token = try await built.token("C-0000")
        let attempts = [
            "/v1/passes/../.passforge/state.json", "/v1/passes/\(type)/../../.passforge/state.json",
            "/v1/passes/\(type)/..%2F..%2F.passforge%2Fstate.json",
            "/v1/passes/%2E%2E/%2E%2E%2F.passforge%2Fstate.json",
            "/v1/passes/\(type)/C-0000%00", "/download/../.passforge/state.json",
            "/download/..%2F.passforge%2Fstate.json",
            "/download/%2E%2E/.passforge/downloads.csv", "/.passforge/state.json", "/.passforge/downloads.csv",
            "/v1/devices/../../etc/passwd", "/v1/devices/..%2F..%2Fetc/registrations/passwd", "/../../../../etc/passwd",
            "/v1/passes/\(type)/C-0000/..", "/download/\(type)/../../.passforge/state.json",
        ]
        // The raw client sees a file when there is one to see.
        let control = try RawHTTP.send(
            port: server.port,
            "GET /v1/passes/\(type)/C-0000 HTTP/1.1\r\nHost: localhost\r\nAuthorization: ApplePass \(token)\r\nConnection: close\r\n\r\n"
        )
        #expect(control.status == 200 && control.response.contains("PK\u{3}\u{4}"))
        for path in attempts {
            let (status, response) = try RawHTTP.send(
                port: server.port,
                "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: ApplePass \(token)\r\nConnection: close\r\n\r\n"
            )
            #expect((400..<500).contains(status), "\(path): \(status)")
            // Markers of state.json, downloads.csv, /etc/passwd and a zip.
            for secret in ["\"tokenHash\"", "\"fingerprint\"", "\(type),C-0000", "root:x", "PK\u{3}\u{4}", token] {
                #expect(!response.contains(secret), "\(path) leaked \(secret)")
            }
        }
        #expect(await server.stop() == 0)
    }

    @Test func aHundredConcurrentRegistrationsOfOnePassMakeOneRow() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let token = try await built.token("C-0000")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await client.register("dev1", type, "C-0000", token: token, pushToken: Self.pushA).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        #expect(statuses.filter { $0 == 200 }.count == 99)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "1")
        #expect(try await built.sql("SELECT COUNT(*) FROM devices") == "1")
        #expect(await server.stop() == 0)
    }

    @Test func everyAcknowledgedRegistrationSurvivesSIGKILL() async throws {
        let built = try await BuiltProject.make(passCount: 4)
        var server = try await ServerProcess(built)
        var client = Client(base: server.base)
        let type = built.type
        let serials = ["C-0000", "C-0001", "C-0002", "C-0003"]
        var tokens: [String: String] = [:]
        for serial in serials { tokens[serial] = try await built.token(serial) }
        let tokensCopy = tokens
        let clientCopy = client
        let acknowledged = try await withThrowingTaskGroup(of: (String, String, Int).self) { group in
            for index in 0..<200 {
                let device = "device\(index)"
                let serial = serials[index % serials.count]
                group.addTask {
                    (
                        device, serial,
                        try await clientCopy.register(
                            device, type, serial, token: tokensCopy[serial]!, pushToken: Self.pushA
                        ).status
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Killed the instant the last 201 arrived: nothing gets flushed later.
        await server.kill()
        #expect(acknowledged.allSatisfy { $0.2 == 201 })
        server = try await ServerProcess(built)
        client = Client(base: server.base)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "200")
        for (device, serial, _) in acknowledged {
            let list = try await client.serials(device, type)
            #expect(list.json?["serialNumbers"] as? [String] == [serial], "\(device)")
            // And each index file was written before its 201.
            let index = built.fileBytes(TreeLayout.deviceIndexPath(device: device, type: type)).map {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(index?.contains("\"\(serial)\"") == true, "\(device)")
        }
        #expect(await server.stop() == 0)
    }

    @Test func sigtermLetsRequestsInProgressFinish() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built)
        // AsyncHTTPClient retries a refused connection until the deadline: keep it short.
        let client = Client(base: server.base, timeout: .seconds(3))
        let type = built.type
        let token = try await built.token("C-0000")
        let firstAnswer = AsyncStream<Void>.makeStream()
        let results = try await withThrowingTaskGroup(of: (String, Int?).self) { group in
            for index in 0..<150 {
                group.addTask {
                    let device = "term\(index)"
                    defer { firstAnswer.continuation.yield() }
                    // A request refused or cut before it was accepted is fine; an accepted one must finish.
                    let status = try? await client.register(device, type, "C-0000", token: token, pushToken: Self.pushA)
                        .status
                    return (device, status)
                }
            }
            for await _ in firstAnswer.stream { break }
            kill(server.process.processIdentifier, SIGTERM)
            return try await group.reduce(into: []) { $0.append($1) }
        }
        firstAnswer.continuation.finish()
        #expect(await server.stop() == 0)
        let answered = results.filter { $0.1 != nil }
        #expect(!answered.isEmpty)
        #expect(answered.allSatisfy { $0.1 == 201 }, "\(answered.map { $0.1 ?? 0 })")
        let stored = Set(
            try await built.sql("SELECT library_identifier FROM devices").split(separator: "\n").map(String.init))
        #expect(stored.isSuperset(of: answered.map(\.0)))
    }

    @Test func rebuildsWhileServingNeverServeAMixedOrHalfPass() async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let token = try await built.token("C-0001")
        // The fetcher reads through the rebuilds until it is served the last one (the event it waits for), within a bound.
        let lastETag = LockedBox<String?>(nil)
        let fetcher = Task { () throws -> [(etag: String, body: [UInt8])] in
            var seen: [(etag: String, body: [UInt8])] = []
            let deadline = ContinuousClock.now + .seconds(120)
            while seen.last == nil || seen.last?.etag != lastETag.get() {
                guard ContinuousClock.now < deadline else {
                    throw HarnessError("the last build was not served in 120 s")
                }
                let answer = try await client.pass(type, "C-0001", token: token)
                guard answer.status == 200, let etag = answer.header("ETag") else {
                    throw HarnessError("status \(answer.status) during a rebuild: \(answer.text)")
                }
                seen.append((etag, answer.body))
            }
            return seen
        }
        var etags: Set<String> = [try built.record("C-0001").etag]
        for round in 1...3 {
            built.project.writeList(count: 2, points: { $0 == 1 ? 1000 + round : $0 })
            try await built.build()
            etags.insert(try built.record("C-0001").etag)
        }
        lastETag.set(try built.record("C-0001").etag)
        let seen = try await fetcher.value
        #expect(seen.count > 3)
        for (etag, body) in seen {
            // The ETag is the one of these very bytes, and of a build that happened.
            let digest = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
            #expect(etag == "\"\(digest)\"")
            #expect(etags.contains(etag))
        }
        #expect(seen.last?.etag == (try built.record("C-0001").etag))
        #expect(await server.stop() == 0)
    }

    @Test func basePathPrefixesEveryURL() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built, arguments: ["--base-path", "/passes/"])
        let client = Client(base: server.base)
        let token = try await built.token("C-0000")
        #expect(server.stdout.get().contains("listening on http://127.0.0.1:\(server.port)/passes/"))
        #expect(try await client.send(.GET, "/passes/health").status == 200)
        #expect(try await client.send(.GET, "/health").status == 404)
        #expect(
            try await client.send(
                .GET, "/passes/v1/passes/\(built.type)/C-0000", headers: ["Authorization": "ApplePass \(token)"]
            ).status == 200)
        #expect(
            try await client.send(
                .GET, "/v1/passes/\(built.type)/C-0000", headers: ["Authorization": "ApplePass \(token)"]
            ).status == 404)
        #expect(
            try await client.send(
                .POST, "/passes/v1/devices/d1/registrations/\(built.type)/C-0000",
                headers: ["Authorization": "ApplePass \(token)"], body: Array(#"{"pushToken":"\#(Self.pushA)"}"#.utf8)
            ).status == 201)
        #expect(await server.stop() == 0)
    }

    @Test func downloadLinksNeedNoTokenAndSupportConditionalGET() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let record = try built.record("C-0000")
        let answer = try await client.send(.GET, "/" + record.downloadPath)
        #expect(answer.status == 200)
        #expect(answer.body == built.fileBytes(record.path))
        #expect(answer.header("ETag") == record.etag)
        #expect(answer.header("Content-Type") == "application/vnd.apple.pkpass")
        #expect(
            try await client.send(.GET, "/" + record.downloadPath, headers: ["If-None-Match": record.etag]).status
                == 304)
        #expect(
            try await client.send(
                .GET, "/" + record.downloadPath, headers: ["If-Modified-Since": answer.header("Last-Modified")!]
            ).status == 304)
        #expect(await server.stop() == 0)
    }

    @Test func aRemovedPassCanStillBeUnregistered() async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let device = "aa00bb11cc22dd33"
        let token1 = try await built.token("C-0001")
        #expect(
            try await client.register(
                device, type, "C-0000", token: try await built.token("C-0000"), pushToken: Self.pushA
            ).status == 201)
        #expect(try await client.register(device, type, "C-0001", token: token1, pushToken: Self.pushA).status == 201)

        // The editor deletes C-0001 from the content; the build removes its file and index entry.
        built.project.writeList(count: 1)
        try await built.build()
        #expect(try built.buildState().removedPasses["\(type)/C-0001"] != nil)
        #expect(try await eventually { try await client.pass(type, "C-0001", token: token1).status == 401 })
        #expect(
            built.fileBytes(TreeLayout.deviceIndexPath(device: device, type: type)).map {
                String(decoding: $0, as: UTF8.self)
            }?
            .contains("C-0001") == false)
        // It cannot be registered again, but the device that holds it can say goodbye, with its token only.
        #expect(try await client.register(device, type, "C-0001", token: token1, pushToken: Self.pushA).status == 401)
        #expect(try await client.unregister(device, type, "C-0001", token: "wrong-token-wrong-token").status == 401)
        #expect(try await client.unregister(device, type, "C-0001", token: token1).status == 200)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "1")

        // Built again, it is a pass like any other.
        built.project.writeList(count: 2)
        try await built.build()
        #expect(try built.buildState().removedPasses.isEmpty)
        #expect(await server.stop() == 0)
    }

    @Test func rateLimitAnswers429PerClient() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let server = try await ServerProcess(built, arguments: ["--rate-limit", "5"])
        let client = Client(base: server.base)
        var statuses: [Int] = []
        for _ in 0..<20 { statuses.append(try await client.send(.GET, "/health").status) }
        #expect(statuses.prefix(5).allSatisfy { $0 == 200 })
        #expect(statuses.contains(429))
        let limited = try await client.send(.GET, "/health")
        if limited.status == 429 {
            #expect(limited.header("Retry-After") == "1")
            #expect(limited.json?["error"] is String)
        }
        #expect(await server.stop() == 0)
    }
}

/// Test-side names of HTTP methods, so tests do not depend on NIO's spelling.
// swift-format-ignore: AlwaysUseLowerCamelCase
// The cases read as the methods' own names on the wire.
enum HTTPMethodName: String {
    case GET, HEAD, POST, PUT, DELETE
}
