import DeviceCheck
import Foundation
import MockDeviceCheck
import PassOffers
import RegistrationStore
import SQLiteRegistrationStore
import Synchronization
import Testing
import TestSupport

/// The claim sequence against the mock of Apple (real HTTPS, JWT verified) and a real SQLite store.
@Suite struct OfferClaimServiceTests {
    let folder = TemporaryDirectory("passforge-claims")
    let type = "pass.com.example.coupon"

    struct Setup {
        var rig: DeviceCheckRig
        var store: SQLiteRegistrationStore
        var service: OfferClaimService
    }

    /// Runs `body` with a pool, the mock of Apple and the service; the mock's client is shut down however `body` ends.
    /// - Parameter timeout: for each call to Apple; short only where a test makes Apple slow on purpose.
    func withSetup(poolSize: Int = 3, bit: Int = 0, timeout: Duration = .seconds(10), _ body: (Setup) async throws -> Void) async throws {
        try await DeviceCheckRig.with(timeout: timeout) { rig in
            let store = try SQLiteRegistrationStore(path: folder.file("registrations.sqlite"))
            try await store.replaceOfferPools(with: (1...poolSize).map {
                OfferPass(offer: "welcome", passTypeIdentifier: type, serialNumber: "C-\($0)")
            })
            let clock = rig.clock
            let service = OfferClaimService(offers: [OfferDefinition(name: "welcome", bit: bit)], store: store, deviceCheck: rig.client,
                                            now: { Double(clock.now) })
            try await body(Setup(rig: rig, store: store, service: service))
        }
    }

    func token(_ device: String) -> String { MockDeviceCheckServer.deviceToken(for: device) }

    @Test func aNewDeviceGetsAPassAndItsBitIsSet() async throws {
        try await withSetup(bit: 1) { setup in
            let answer = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-1"), claimIdentifier: UUID().uuidString)
            guard case .created(let claim) = answer else { Issue.record("\(answer)"); return }
            #expect(claim.bitIsSet && claim.passTypeIdentifier == type)
            #expect(setup.rig.server.bits(of: "phone-1")! == (false, true), "bit 1 set, bit 0 kept")
        }
    }

    @Test func aRetriedClaimIdentifierGetsTheSamePassAndADeviceThatClaimedGets409() async throws {
        try await withSetup { setup in
            let id = UUID().uuidString
            guard case .created(let first) = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) else {
                Issue.record("no pass"); return
            }
            #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) == .repeated(first))
            #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: UUID().uuidString) == .alreadyClaimed)
            #expect(try await setup.store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 1, left: 2)])
        }
    }

    @Test func anExhaustedPoolAnUnknownOfferAndMalformedRequests() async throws {
        try await withSetup(poolSize: 1) { setup in
            _ = try await setup.service.claim(offer: "welcome", deviceToken: token("a"), claimIdentifier: "claim-a")
            #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("b"), claimIdentifier: "claim-b") == .exhausted)
            #expect(setup.rig.server.bits(of: "b") == nil, "no bit set when nothing was assigned")
            #expect(try await setup.service.claim(offer: "nope", deviceToken: token("c"), claimIdentifier: "claim-c") == .unknownOffer)
            for (deviceToken, claim) in [(token("d"), ""), (token("d"), "has space"), (token("d"), String(repeating: "x", count: 65)),
                                         ("not base64!", "claim-d")] {
                guard case .badRequest = try await setup.service.claim(offer: "welcome", deviceToken: deviceToken, claimIdentifier: claim) else {
                    Issue.record("accepted \(claim.debugDescription)"); continue
                }
            }
            setup.rig.server.failNext(.badDeviceToken)
            guard case .badRequest = try await setup.service.claim(offer: "welcome", deviceToken: token("e"), claimIdentifier: "claim-e") else {
                Issue.record("Apple's Bad Device Token is not a 400"); return
            }
        }
    }

    @Test(arguments: [MockDeviceCheckServer.ScriptedAnswer.tooManyRequests, .serverError, .serviceUnavailable,
                      .init(status: 200, delay: .seconds(3))])
    func appleUnavailableMeans503AndNothingAssigned(answer: MockDeviceCheckServer.ScriptedAnswer) async throws {
        try await withSetup(timeout: .milliseconds(500)) { setup in
            setup.rig.server.failNext(answer)
            let result = try await setup.service.claim(offer: "welcome", deviceToken: token("f"), claimIdentifier: "claim-f")
            #expect(result == .unavailable(retryAfterSeconds: 5))
            #expect(try await setup.store.offerStatistics().first?.claimed == 0)
        }
    }

    /// The bit update fails after the assignment: the claim stands, the same
    /// claim identifier gets the same pass, and the background retry sets the bit.
    @Test func aFailedBitUpdateIsRetriedAndNeverGivesASecondPass() async throws {
        try await withSetup { setup in
            setup.rig.server.failNext(.init(status: 503, path: "/v1/update_two_bits"))
            let id = UUID().uuidString
            guard case .created(let claim) = try await setup.service.claim(offer: "welcome", deviceToken: token("g"), claimIdentifier: id) else {
                Issue.record("no pass"); return
            }
            #expect(!claim.bitIsSet && setup.rig.server.bits(of: "g") == nil)
            guard case .repeated(let again) = try await setup.service.claim(offer: "welcome", deviceToken: token("g"), claimIdentifier: id) else {
                Issue.record("a retry did not get its pass"); return
            }
            #expect(again.serialNumber == claim.serialNumber)
            #expect(try await setup.service.retryPendingBitUpdates(minimumAge: 30) == 0, "too young: the request may still be setting it")
            setup.rig.clock.advance(by: 31)
            #expect(try await setup.service.retryPendingBitUpdates(minimumAge: 30) == 1)
            #expect(setup.rig.server.bits(of: "g")! == (true, false))
            #expect(try await setup.store.pendingBitUpdates(claimedBefore: .infinity, limit: 10).isEmpty)
        }
    }
}
