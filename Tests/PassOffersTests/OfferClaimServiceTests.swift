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

    func setUp(poolSize: Int = 3, bit: Int = 0) async throws -> Setup {
        let rig = try await DeviceCheckRig.start(timeout: .milliseconds(500))
        let store = try SQLiteRegistrationStore(path: folder.file("registrations.sqlite"))
        try await store.replaceOfferPools(with: (1...poolSize).map {
            OfferPass(offer: "welcome", passTypeIdentifier: type, serialNumber: "C-\($0)")
        })
        let clock = rig.clock
        let service = OfferClaimService(offers: [OfferDefinition(name: "welcome", bit: bit)], store: store, deviceCheck: rig.client,
                                        now: { Double(clock.now) })
        return Setup(rig: rig, store: store, service: service)
    }

    func token(_ device: String) -> String { MockDeviceCheckServer.deviceToken(for: device) }

    @Test func aNewDeviceGetsAPassAndItsBitIsSet() async throws {
        let setup = try await setUp(bit: 1)
        let answer = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-1"), claimIdentifier: UUID().uuidString)
        guard case .created(let claim) = answer else { Issue.record("\(answer)"); return }
        #expect(claim.bitIsSet && claim.passTypeIdentifier == type)
        #expect(setup.rig.server.bits(of: "phone-1")! == (false, true), "bit 1 set, bit 0 kept")
        await setup.rig.shutdown()
    }

    @Test func aRetriedClaimIdentifierGetsTheSamePassAndADeviceThatClaimedGets409() async throws {
        let setup = try await setUp()
        let id = UUID().uuidString
        guard case .created(let first) = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) else {
            Issue.record("no pass"); return
        }
        #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) == .repeated(first))
        #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: UUID().uuidString) == .alreadyClaimed)
        #expect(try await setup.store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 1, left: 2)])
        await setup.rig.shutdown()
    }

    @Test func anExhaustedPoolAnUnknownOfferAndMalformedRequests() async throws {
        let setup = try await setUp(poolSize: 1)
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
        await setup.rig.shutdown()
    }

    @Test(arguments: [MockDeviceCheckServer.ScriptedAnswer.tooManyRequests, .serverError, .serviceUnavailable,
                      .init(status: 200, delay: .seconds(3))])
    func appleUnavailableMeans503AndNothingAssigned(answer: MockDeviceCheckServer.ScriptedAnswer) async throws {
        let setup = try await setUp()
        setup.rig.server.failNext(answer)
        let result = try await setup.service.claim(offer: "welcome", deviceToken: token("f"), claimIdentifier: "claim-f")
        #expect(result == .unavailable(retryAfterSeconds: 5))
        #expect(try await setup.store.offerStatistics().first?.claimed == 0)
        await setup.rig.shutdown()
    }

    /// The bit update fails after the assignment: the claim stands, the same
    /// claim identifier gets the same pass, and the background retry sets the bit.
    @Test func aFailedBitUpdateIsRetriedAndNeverGivesASecondPass() async throws {
        let setup = try await setUp()
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
        await setup.rig.shutdown()
    }
}
