import AsyncHTTPClient
import Crypto
import Foundation
import MockDeviceCheck
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// DeviceCheck offers through the real `passforge build` and `passforge serve` processes, with the
/// HTTPS mock of Apple: passforge.yml's offers and deviceCheck, `offer:` in content, a claim
/// whose pass downloads and verifies, and a server killed between the assignment and the bit update.
@Suite struct OfferServeEndToEndTests {
    /// - Parameter databaseURL: the PostgreSQL store for build and serve (SQLite in the project without it).
    func project(rig: DeviceCheckRig, databaseURL: String? = nil) async throws -> BuiltProject {
        let built = try await BuiltProject.make(passCount: 1)
        if let databaseURL { built.environment["PASSFORGE_DATABASE_URL"] = databaseURL }
        let files = built.project.directory
        try FileManager.default.removeItem(atPath: files.file("content/cards.yml"))
        files.write(
            "passforge.yml",
            """
            passTypeIdentifier: \(TestPKI.passType)
            teamIdentifier: \(TestPKI.team)
            organizationName: passforge tests
            webServiceURL: https://passes.example.com/
            deviceCheck:
              teamIdentifier: \(DeviceCheckRig.team)
              keyIdentifier: \(DeviceCheckRig.keyIdentifier)
              baseURL: \(rig.server.baseURL)
            offers:
              welcome: { bit: 0 }
            """)
        files.write(
            "content/coupons.yml",
            """
            template: card
            offer: welcome
            passes:
              - { serialNumber: W-1, data: { name: One, points: 1 } }
              - { serialNumber: W-2, data: { name: Two, points: 2 } }
              - { serialNumber: W-3, data: { name: Three, points: 3 } }
            """)
        files.write("keys/AuthKey.p8", rig.key.pemRepresentation)
        built.environment["PASSFORGE_DEVICECHECK_KEY"] = files.file("keys/AuthKey.p8")
        built.environment["PASSFORGE_DEVICECHECK_CA_CERTIFICATE"] = TestPKI.shared.root
        let result = try await built.project.passforge(["build"], environment: built.environment)
        #expect(result.status == 0 && result.output.contains("offer welcome: 3 passes in the pool"), "\(result.output)")
        return built
    }

    static func claim(_ client: Client, device: String, id: String) async throws -> Client.Answer {
        try await client.send(
            .POST, "/v1/offers/welcome/claims", headers: ["Content-Type": "application/json"],
            body: Array(
                #"{"claimIdentifier":"\#(id)","queryToken":"\#(MockDeviceCheckServer.deviceToken(for: device))","updateToken":"\#(MockDeviceCheckServer.deviceToken(for: device))"}"#
                    .utf8))
    }

    @Test func aClaimedPassDownloadsAndVerifiesAndAKilledClaimCompletesAfterARestart() async throws {
        try await DeviceCheckRig.with { rig in
            let built = try await project(rig: rig)
            var server = try await ServerProcess(built)
            var client = Client(base: server.base)

            let created = try await Self.claim(client, device: "phone-1", id: "11111111-1111-4111-8111-111111111111")
            #expect(created.status == 201, "\(created.text) \(server.stderr.get())")
            let url = try #require(created.json?["url"] as? String)
            let path = String(url.dropFirst("https://passes.example.com".count))
            let download = try await client.send(.GET, path)
            #expect(download.status == 200 && download.header("Content-Type") == "application/vnd.apple.pkpass")
            let file = built.project.directory.file("claimed.pkpass")
            _ = FileManager.default.createFile(atPath: file, contents: Data(download.body))
            let verified = try await PassVerifier.verifyWithoutBlocking(file, root: TestPKI.shared.root)
            #expect(verified.passJSON["serialNumber"] as? String == created.json?["serialNumber"] as? String)
            #expect(rig.server.bits(of: "phone-1")! == (true, false))

            // Apple holds the bit update; the server is killed while it waits.
            rig.server.failNext(.init(status: 200, path: "/v1/update_two_bits", delay: .seconds(120)))
            let id = "22222222-2222-4222-8222-222222222222"
            let pending = Task { [client] in try? await Self.claim(client, device: "phone-2", id: id) }
            #expect(
                try await eventually {
                    rig.server.requests.contains { $0.path == "/v1/update_two_bits" && $0.device == "phone-2" }
                })
            await server.kill()
            _ = await pending.value
            #expect(rig.server.bits(of: "phone-2") == nil, "killed before Apple set the bit")

            // The claim holds its pass, unconfirmed: `passforge offers` lists it, and nothing sets the bit
            // until the app retries (a token is never sent twice, so passforge has none to retry with).
            let listed = try await built.project.passforge(["offers"], environment: built.environment)
            #expect(
                listed.output.contains("not set yet") && listed.output.contains(id.uppercased()), "\(listed.output)")
            server = try await ServerProcess(built)
            client = Client(base: server.base)
            let retried = try await Self.claim(client, device: "phone-2", id: id)
            #expect(retried.status == 200, "the same claim identifier gets its pass: \(retried.text)")
            #expect(rig.server.bits(of: "phone-2")?.bit0 == true, "set with the retry's own update token")
            #expect(rig.server.tokensSentTwice.isEmpty, "no token reached Apple twice")
            let claimedSerial = try await built.sql(
                "SELECT serial_number FROM offer_claims WHERE claim_identifier = '\(id.uppercased())'")
            #expect(retried.json?["serialNumber"] as? String == claimedSerial)
            #expect(try await Self.claim(client, device: "phone-2", id: UUID().uuidString).status == 409)

            let offers = try await built.project.passforge(["offers"], environment: built.environment)
            #expect(
                offers.output.contains("welcome") && offers.output.contains("3") && offers.output.contains("2"),
                "\(offers.output)")
            let json = try await built.project.passforge(
                ["offers", "--format", "json"], environment: built.environment)
            #expect(json.output.contains(#""claimed" : 2"#) && json.output.contains(#""left" : 1"#), "\(json.output)")
            #expect(json.output.contains(#""unconfirmedClaims" : ["#), "\(json.output)")
            #expect(await server.stop() == 0, "a graceful stop: \(server.stderr.get())")
        }
    }

    @Test func theOperatorQueriesAndSetsADevicesBitsByHand() async throws {
        try await DeviceCheckRig.with { rig in
            let built = try await project(rig: rig)
            let tokenFile = built.project.directory.file("token.txt")
            func token(_ count: Int = 1) {
                let tokens = (0..<count).map { _ in MockDeviceCheckServer.deviceToken(for: "desk") }.joined(
                    separator: "\n")
                _ = FileManager.default.createFile(atPath: tokenFile, contents: Data(tokens.utf8))
            }
            token()
            var result = try await built.project.passforge(
                ["device-check", "query", "--token", tokenFile], environment: built.environment)
            #expect(
                result.status == 0 && result.output.contains("bit0: false") && result.output.contains("bit1: false"),
                "\(result.output)")
            token()
            result = try await built.project.passforge(
                ["device-check", "set", "--token", tokenFile, "--bit", "1", "--value", "true"],
                environment: built.environment)
            #expect(
                result.status != 0 && result.output.contains("two tokens"),
                "one token cannot query and update: \(result.output)")
            token(2)
            result = try await built.project.passforge(
                ["device-check", "set", "--token", tokenFile, "--bit", "1", "--value", "true"],
                environment: built.environment)
            #expect(result.status == 0 && rig.server.bits(of: "desk")! == (false, true), "\(result.output)")
            #expect(rig.server.tokensSentTwice.isEmpty)
            let help = try await built.project.passforge(
                ["device-check", "set", "--help"], environment: built.environment)
            #expect(help.output.contains("two tokens") && help.output.contains("single-use"), "\(help.output)")
            token()
            result = try await built.project.passforge(
                ["device-check", "validate", "--token", tokenFile], environment: built.environment)
            #expect(result.status == 0 && result.output.contains("valid"))
            rig.server.failNext(.badDeviceToken)
            token()
            result = try await built.project.passforge(
                ["device-check", "query", "--token", tokenFile], environment: built.environment)
            let sentToken = try String(contentsOfFile: tokenFile, encoding: .utf8)
            #expect(
                result.status == 1 && result.output.contains("Bad Device Token") && !result.output.contains(sentToken))
            result = try await built.project.passforge(
                ["device-check", "set", "--token", tokenFile, "--bit", "2", "--value", "true"],
                environment: built.environment)
            #expect(result.status != 0)
        }
    }
}
