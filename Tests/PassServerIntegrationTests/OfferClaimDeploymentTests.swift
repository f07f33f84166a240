import Foundation
import MockDeviceCheck
import NIOHTTP1
import TestSupport
import Testing

/// Issue 30: the shipped static-host configs route DeviceCheck offer claims to `passforge serve`, with a
/// body limit, as they do registrations and the log: nginx running `deploy/nginx-passforge.conf` and Caddy
/// running `deploy/Caddyfile` as shipped, the real CLI's build and server, and the HTTPS mock of Apple.
@Suite(.serialized) struct OfferClaimDeploymentTests {
    @Test(arguments: [StaticHost.Server.nginx, .caddy]) func claimsGoThroughTheHostToPassforge(
        server: StaticHost.Server
    ) async throws {
        try await DeviceCheckRig.with { rig in
            let built = try await OfferServeEndToEndTests().project(rig: rig)
            let passforge = try await ServerProcess(built)
            let host = try await StaticHost(server, root: built.output, upstreamPort: passforge.port)
            defer { host.terminate() }
            let client = Client(base: host.base)
            let id = UUID().uuidString
            let created = try await OfferServeEndToEndTests.claim(client, device: "via-\(server)", id: id)
            #expect(created.status == 201, "\(server): \(created.text)")
            #expect(rig.server.bits(of: "via-\(server)")?.bit0 == true)
            #expect(try await OfferServeEndToEndTests.claim(client, device: "via-\(server)", id: id).status == 200)
            // passforge's own refusals pass through unchanged.
            let json = ["Content-Type": "application/json"]
            let malformed = try await client.send(
                .POST, "/v1/offers/welcome/claims", headers: json, body: Array("{}".utf8))
            #expect(malformed.status == 400 && malformed.text.contains("queryToken"), "\(server): \(malformed.text)")
            #expect(
                try await client.send(.POST, "/v1/offers/nope/claims", headers: json, body: Array("{}".utf8)).status
                    == 404)
            // The host's own limits: POST only, and a body no larger than two tokens need.
            let get = try await client.send(.GET, "/v1/offers/welcome/claims")
            #expect(get.status == 405 && get.header("Allow") == "POST", "\(server)")
            let tooLarge = try await client.send(
                .POST, "/v1/offers/welcome/claims", headers: json,
                body: Array(repeating: UInt8(ascii: "a"), count: 40_000))
            #expect(tooLarge.status == 413, "\(server): \(tooLarge.status)")
            #expect(
                try await client.send(.POST, "/v1/offers/welcome/claims/x", headers: json, body: Array("{}".utf8))
                    .status == 404)
        }
    }

    @Test(arguments: [StaticHost.Server.nginx, .caddy]) func withoutPassforgeAClaimFailsAs502(server: StaticHost.Server)
        async throws
    {
        let built = try await BuiltProject.make(passCount: 1)
        let host = try await StaticHost(server, root: built.output, upstreamPort: freeLoopbackPort())
        defer { host.terminate() }
        let answer = try await Client(base: host.base).send(
            .POST, "/v1/offers/welcome/claims", headers: ["Content-Type": "application/json"],
            body: Array("{}".utf8))
        #expect(answer.status == 502, "\(server): \(answer.status)")
    }
}
