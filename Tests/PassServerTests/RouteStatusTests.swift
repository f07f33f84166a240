import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PassServer
import SQLiteRegistrationStore
import TestSupport
import Testing
import WalletTree

/// Every route's status codes and the headers the outside checks compare (DESIGN.md, openapi.yaml), in
/// process through HummingbirdTesting's router client: downloads, health, metrics, offers, the router's
/// own 404, 405 and 414, the parameters' 400, the body limits' 413, the rate limits' 429, the base path.
@Suite struct RouteStatusTests {
    static let auth = "ApplePass"

    /// The application over `fixture`'s tree, as `passforge serve` makes it, with `configure`'s changes.
    static func application(
        _ fixture: ServiceStatusTests.Fixture, configure: (inout PassServerConfiguration) -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var configuration = PassServerConfiguration()
        configure(&configuration)
        let store = try SQLiteRegistrationStore(path: fixture.state.file("registrations-\(UUID().uuidString).sqlite"))
        let output = OutputFolder(directory: fixture.project.output)
        var logger = Logger(label: "test")
        logger.logLevel = .warning  // not a line per request
        return PassServer.application(configuration: configuration, output: output, store: store, logger: logger)
    }

    /// A capability download the build wrote (`download/<capability>.pkpass`).
    static func downloadPath(_ fixture: ServiceStatusTests.Fixture) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.project.output + "/download")
        return "/download/" + (try #require(names.sorted().first { $0.hasSuffix(".pkpass") }))
    }

    @Test func unknownPathsAnswerTheJSON404AndKnownPathsA405WithAllow() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            let unknown = [
                "/", "/nothing/here", "/v1", "/v1/passes/pass.a.b", "/v1/devices/d1/registrations",
                "/download",
            ]
            for path in unknown {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .notFound, "\(path)")
                    #expect(String(buffer: response.body) == #"{"error":"no such resource"}"# + "\n")
                    #expect(response.headers[.contentType] == "application/json")
                    #expect(response.headers[.cacheControl] == "no-store")
                }
            }
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.put, "/health", "GET, HEAD"), (.post, "/metrics", "GET, HEAD"), (.get, "/v1/log", "POST"),
                (.delete, "/v1/passes/pass.a.b/S-1", "GET, HEAD"), (.post, "/v1/orders/order.a.b/O-1", "GET, HEAD"),
                (.get, "/v1/devices/d1/registrations/pass.a.b/S-1", "POST, DELETE"),
                (.post, "/v1/devices/d1/registrations/pass.a.b", "GET, HEAD"),
                (.get, "/v1/offers/welcome/claims", "POST"), (.patch, "/download/abc.pkpass", "GET, HEAD"),
                (.options, "/download/pass.a.b/S-1.pkpass", "GET, HEAD"),
            ]
            for (method, path, allowed) in cases {
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    #expect(response.headers[.allow] == allowed, "\(method) \(path)")
                    #expect(String(buffer: response.body).hasPrefix(#"{"error":"method not allowed; use "#))
                }
            }
        }
    }

    @Test func parametersAreCheckedBeforeTheMethodAndLongPathsAnswer414() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            let invalid: [(HTTPRequest.Method, String, HTTPResponse.Status, String)] = [
                (.get, "/v1/devices/bad!/registrations/pass.a.b", .badRequest, "invalid deviceLibraryIdentifier"),
                (.put, "/v1/devices/bad!/registrations/pass.a.b/S-1", .badRequest, "invalid deviceLibraryIdentifier"),
                (.post, "/v1/devices/d1/registrations/pass_a/S-1", .badRequest, "invalid passTypeIdentifier"),
                (.get, "/v1/passes/pass.a.b/..", .badRequest, "invalid serialNumber"),
                (.get, "/v1/orders/order.a.b/..", .badRequest, "invalid orderIdentifier"),
                (.get, "/v1/orders/order_a/O-1", .badRequest, "invalid orderTypeIdentifier"),
                (.post, "/v1/offers/Bad Name/claims", .notFound, "no such resource"),
                (.get, "/download/../x.pkpass", .notFound, "no such resource"),
                (.get, "/download/x.orders", .notFound, "no such resource"),
                (.get, "/download/..%2F.passforge%2Fstate.json", .notFound, "no such resource"),
                (.get, "/.passforge/state.json", .notFound, "no such resource"),
                (.get, "/v1/passes/pass.a.b/..%2F..%2Fstate.json", .badRequest, "invalid serialNumber"),
            ]
            for (method, path, status, message) in invalid {
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == status, "\(method) \(path)")
                    #expect(String(buffer: response.body).contains(message), "\(method) \(path)")
                }
            }
            let long = "/v1/passes/pass.a.b/" + String(repeating: "x", count: 1100)
            try await client.execute(uri: long, method: .get) { response in
                #expect(response.status == .uriTooLong)
                #expect(String(buffer: response.body) == #"{"error":"path longer than 1024 bytes"}"# + "\n")
            }
            try await client.execute(uri: "/" + String(repeating: "y", count: 1100), method: .get) {
                #expect($0.status == .uriTooLong)
            }
        }
    }

    @Test func unauthorizedAnswersAreTheOnes401OfTheKind() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            let items = [("/v1/passes/pass.a.b/S-1", "ApplePass"), ("/v1/orders/order.a.b/O-1", "AppleOrder")]
            for (path, scheme) in items {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.headers[.wwwAuthenticate] == scheme)
                    #expect(
                        String(buffer: response.body)
                            == #"{"error":"missing, malformed or wrong Authorization: \#(scheme) token"}"# + "\n")
                    #expect(response.headers[.contentLength] == String(response.body.readableBytes))
                }
            }
        }
    }

    @Test func downloadsAnswerTheFileItsETagA304AndHEAD() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        let path = try Self.downloadPath(fixture)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.project.output + path))
        try await Self.application(fixture).test(.router) { client in
            var etag = ""
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/vnd.apple.pkpass")
                #expect(response.headers[.cacheControl] == "no-cache")
                #expect(response.headers[.contentLength] == String(bytes.count))
                #expect(Array(response.body.readableBytesView) == Array(bytes))
                etag = try #require(response.headers[.eTag])
                #expect(response.headers[.lastModified] != nil)
            }
            try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
                #expect(response.headers[.eTag] == etag)
                #expect(response.headers[.contentLength] == nil && response.headers[.contentType] == nil)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: path, method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentLength] == String(bytes.count))
                #expect(response.body.readableBytes == 0)
            }
            let capability = "/download/AAAAAAAAAAAAAAAAAAAAAA"
            for missing in [
                capability + ".pkpass", "/download/pass.a.b/S-1.pkpass", capability + ".pkpasses",
                capability + ".html", capability + ".png",
            ] {
                try await client.execute(uri: missing, method: .get) { #expect($0.status == .notFound, "\(missing)") }
            }
        }
    }

    @Test func healthAndMetricsAnswerWithTheirTypesAndCountTheRoutes() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(String(buffer: response.body) == #"{"status":"ok","passes":2,"orders":1}"# + "\n")
            }
            try await client.execute(uri: "/health", method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/v1/passes/pass.a.b/S-1", method: .get) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/nothing", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/health", method: .put) { #expect($0.status == .methodNotAllowed) }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                let text = String(buffer: response.body)
                for line in [
                    #"route="health",status="200""#, #"route="pass",status="401""#,
                    #"route="unmatched",status="404""#, #"route="health",status="405""#,
                ] {
                    #expect(text.contains(line) || Self.sample(text, has: line), "\(line)")
                }
            }
        }
    }

    /// Whether a sample of `text` has the labels of `line` (Prometheus orders a sample's labels its own way).
    static func sample(_ text: String, has line: String) -> Bool {
        let wanted = line.split(separator: ",").map(String.init)
        return text.split(separator: "\n").contains { sample in
            sample.hasPrefix("passforge_http_requests_total{") && wanted.allSatisfy { sample.contains($0) }
        }
    }

    @Test func bodiesOverTheirLimitsAnswer413AndClose() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            let registration = "/v1/devices/device0001/registrations/\(TestPKI.passType)/C-0000"
            let auth: HTTPFields = [.authorization: "ApplePass \(fixture.passToken)"]
            let big = ByteBuffer(string: #"{"pushToken":""# + String(repeating: "a", count: 5000) + #""}"#)
            try await client.execute(uri: registration, method: .post, headers: auth, body: big) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.headers[.connection] == "close")
                #expect(String(buffer: response.body) == #"{"error":"request body larger than 4096 bytes"}"# + "\n")
            }
            let logs = ByteBuffer(string: #"{"logs":[""# + String(repeating: "m", count: 70_000) + #""]}"#)
            try await client.execute(uri: "/v1/log", method: .post, body: logs) { response in
                #expect(response.status == .contentTooLarge)
                #expect(String(buffer: response.body).contains("larger than 65536 bytes"))
            }
            try await client.execute(uri: "/v1/log", method: .post, body: ByteBuffer(string: "[1]")) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: registration, method: .post, headers: auth, body: ByteBuffer(string: "{}")) {
                #expect($0.status == .badRequest)
            }
        }
    }

    @Test func rateLimitsAnswer429WithRetryAfter() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture, configure: { $0.rateLimit = 1 }).test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "1")
                #expect(String(buffer: response.body) == #"{"error":"too many requests; slow down"}"# + "\n")
            }
        }
        try await Self.application(fixture, configure: { $0.registrationsPerMinute = 1 }).test(.router) { client in
            let auth: HTTPFields = [.authorization: "ApplePass \(fixture.passToken)"]
            let push = ByteBuffer(string: #"{"pushToken":"0123456789abcdef0123456789abcdef"}"#)
            let registration = "/v1/devices/device0001/registrations/\(TestPKI.passType)/C-0000"
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "60")
            }
        }
    }

    /// `--device-lists store`: the same statuses, the list from the store, and no index file written.
    @Test func deviceListsFromTheStoreWriteNoIndexFile() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        let devices = fixture.project.output + "/v1/devices"
        try? FileManager.default.removeItem(atPath: devices)
        try await Self.application(fixture, configure: { $0.deviceLists = .store }).test(.router) { client in
            let auth: HTTPFields = [.authorization: "ApplePass \(fixture.passToken)"]
            let push = ByteBuffer(string: #"{"pushToken":"0123456789abcdef0123456789abcdef"}"#)
            let registration = "/v1/devices/device0003/registrations/\(TestPKI.passType)/C-0000"
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: "/v1/devices/device0003/registrations/\(TestPKI.passType)", method: .get) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body).contains(#""serialNumbers":["C-0000"]"#))
            }
            try await client.execute(uri: registration, method: .delete, headers: auth) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v1/devices/device0003/registrations/\(TestPKI.passType)", method: .get) {
                #expect($0.status == .noContent)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: devices))
    }

    @Test func offerClaimsAre404WithoutOffers() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture).test(.router) { client in
            let body = ByteBuffer(string: #"{"claimIdentifier":"x","queryToken":"y","updateToken":"z"}"#)
            try await client.execute(uri: "/v1/offers/welcome/claims", method: .post, body: body) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body) == #"{"error":"no such resource"}"# + "\n")
            }
        }
    }

    @Test func everyRouteIsUnderTheBasePathAndEmptySegmentsAreSkipped() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        try await Self.application(fixture, configure: { $0.basePath = "/passes" }).test(.router) { client in
            try await client.execute(uri: "/passes/health", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/passesX/health", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/passes/health", method: .put) { #expect($0.status == .methodNotAllowed) }
            // A webServiceURL ending in "/" makes devices send "//v1/…".
            let log = ByteBuffer(string: #"{"logs":["a"]}"#)
            try await client.execute(uri: "/passes//v1/log", method: .post, body: log) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/passes/v1/passes/pass.a.b/S-1", method: .get) {
                #expect($0.status == .unauthorized)
            }
        }
    }
}
