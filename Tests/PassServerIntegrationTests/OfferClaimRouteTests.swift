import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import MockDeviceCheck
import NIOCore
import NIOHTTP1
import PassBuild
import WalletTree
import PassOffers
import PassServer
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport
import Testing

/// `POST v1/offers/{offer}/claims` through the real server on a loopback port, with a real
/// HTTP client, a built tree, SQLite, and the HTTPS mock of Apple's DeviceCheck.
@Suite struct OfferClaimRouteTests {
    struct Running {
        var port: Int
        var task: Task<Void, any Error>
        var rig: DeviceCheckRig
        var http: HTTPClient
        var project: BuiltProject

        func claim(_ offer: String = "welcome", body: String) async throws -> (status: Int, body: String, retryAfter: String?) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/offers/\(offer)/claims")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(20))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: bytes), response.headers.first(name: "Retry-After"))
        }

        func claim(device: String, id: String) async throws -> (status: Int, body: String, retryAfter: String?) {
            try await claim(body: #"{"deviceToken":"\#(MockDeviceCheckServer.deviceToken(for: device))","claimIdentifier":"\#(id)"}"#)
        }

        func stop() async {
            task.cancel()
            _ = try? await task.value
            try? await http.shutdown()
            await rig.shutdown()
        }
    }

    /// Runs `body` against a running server; the server, its clients and the mock stop however `body` ends.
    func withServer(passes: Int, offers: Bool = true, _ body: (Running) async throws -> Void) async throws {
        let project = try BuiltProject(passCount: passes)
        let store = try SQLiteRegistrationStore(path: project.databasePath)
        try await store.replaceOfferPools(with: (0..<passes).map {
            OfferPass(offer: "welcome", passTypeIdentifier: project.type, serialNumber: String(format: "C-%04d", $0))
        })
        let rig = try await DeviceCheckRig.start()
        let clock = rig.clock
        var configuration = PassServerConfiguration()
        configuration.port = 0
        configuration.outputDirectory = project.output
        configuration.offers = !offers ? nil : OfferClaimEndpoint(
            service: OfferClaimService(offers: [OfferDefinition(name: "welcome", bit: 0)], store: store, deviceCheck: rig.client,
                                       now: { Double(clock.now) }),
            downloadBaseURL: "https://passes.example.com")
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = PassServer.application(configuration: configuration, store: store,
                                         logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
                                         onServerRunning: { continuation.yield($0) })
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let server = Running(port: port, task: task, rig: rig, http: HTTPClient(eventLoopGroupProvider: .singleton), project: project)
        do {
            try await body(server)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test func everyAnswerOfTheClaimCall() async throws {
        try await withServer(passes: 2) { server in
            let id = UUID().uuidString
            let created = try await server.claim(device: "phone-1", id: id)
            #expect(created.status == 201, "\(created)")
            let pass = try #require(try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: String])
            let serial = try #require(pass["serialNumber"])
            #expect(pass["passTypeIdentifier"] == server.project.type)
            #expect(pass["url"] == "https://passes.example.com/" + (try server.project.record(serial).downloadPath))
            #expect(server.rig.server.bits(of: "phone-1")! == (true, false))

            let repeated = try await server.claim(device: "phone-1", id: id)
            #expect(repeated.status == 200 && repeated.body == created.body, "a retry gets the same pass")
            let again = try await server.claim(device: "phone-1", id: UUID().uuidString)
            #expect(again.status == 409 && again.body.contains(#""error":"alreadyClaimed""#))

            server.rig.server.failNext(.serviceUnavailable)
            let unavailable = try await server.claim(device: "phone-2", id: UUID().uuidString)
            #expect(unavailable.status == 503 && unavailable.retryAfter == "5")

            #expect(try await server.claim(device: "phone-2", id: UUID().uuidString).status == 201)
            let exhausted = try await server.claim(device: "phone-3", id: UUID().uuidString)
            #expect(exhausted.status == 410 && exhausted.body.contains(#""error":"offerExhausted""#))

            #expect(try await server.claim("nope", body: #"{"deviceToken":"YQ==","claimIdentifier":"x"}"#).status == 404)
            for body in ["", "{}", #"{"deviceToken":"not base64!","claimIdentifier":"x"}"#, #"{"deviceToken":"YWJj","claimIdentifier":"a b"}"#, "[1]"] {
                #expect(try await server.claim(body: body).status == 400, "\(body)")
            }
            let tooLarge = try await server.claim(body: String(repeating: "a", count: 21_000))
            #expect(tooLarge.status == 413)

            let metrics = try await server.http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/metrics"), timeout: .seconds(20))
            let exposition = String(buffer: try await metrics.body.collect(upTo: 1 << 20))
            #expect(exposition.contains(#"passforge_offer_claims_total{offer="welcome",outcome="created"} 2"#), "\(exposition)")
            #expect(exposition.contains(#"passforge_offer_claims_total{offer="welcome",outcome="alreadyClaimed"} 1"#))
            #expect(exposition.contains(#"passforge_offer_claims_total{offer="unknown",outcome="unknownOffer"} 1"#))
            #expect(exposition.contains(#"passforge_offer_passes_left{offer="welcome"} 0"#))
        }
    }

    @Test func theRouteIsNotServedWithoutOffers() async throws {
        try await withServer(passes: 1, offers: false) { server in
            let notServed = try await server.claim(device: "phone-1", id: "x")
            #expect(notServed.status == 404)
            #expect(server.rig.server.requests.isEmpty, "Apple is not asked")
            let badName = try await server.claim("..%2F", body: "{}")
            #expect(badName.status == 404)
        }
    }
}
