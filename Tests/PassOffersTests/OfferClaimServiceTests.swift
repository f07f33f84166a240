import DeviceCheck
import Foundation
import MockDeviceCheck
import PassOffers
import RegistrationStore
import PostgresRegistrationStore
import SQLiteRegistrationStore
import Synchronization
import Testing
import TestSupport

/// Where the claims are kept in a test: every test runs on both.
enum ClaimStoreKind: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// A store in a place of its own, and a way to open the same place again (another server).
    func make(in folder: TemporaryDirectory) async throws -> (store: any RegistrationDatabase,
                                                              reopen: @Sendable () async throws -> any RegistrationDatabase) {
        switch self {
        case .sqlite:
            let path = folder.file("registrations.sqlite")
            return (try SQLiteRegistrationStore(path: path), { try SQLiteRegistrationStore(path: path) })
        case .postgres:
            let url = try PostgresTestEnvironment.freshDatabase(prefix: "claims")
            return (try await PostgresRegistrationStore.connect(url: url), { try await PostgresRegistrationStore.connect(url: url) })
        }
    }
}

/// The claim sequence against the mock of Apple (real HTTPS, JWT verified) and a real store, SQLite and PostgreSQL.
@Suite struct OfferClaimServiceTests {
    let folder = TemporaryDirectory("passforge-claims")
    let type = "pass.com.example.coupon"

    struct Setup {
        var rig: DeviceCheckRig
        var store: any RegistrationDatabase
        var reopen: @Sendable () async throws -> any RegistrationDatabase
        var service: OfferClaimService
    }

    /// Runs `body` with a pool, the mock of Apple and the service; the mock's client is shut down however `body` ends.
    /// - Parameter timeout: for each call to Apple; short only where a test makes Apple slow on purpose.
    func withSetup(_ kind: ClaimStoreKind, poolSize: Int = 3, bit: Int = 0, timeout: Duration = .seconds(10),
                   _ body: (Setup) async throws -> Void) async throws {
        try await DeviceCheckRig.with(timeout: timeout) { rig in
            let (store, reopen) = try await kind.make(in: folder)
            try await store.replaceOfferPools(with: (1...poolSize).map {
                OfferPass(offer: "welcome", passTypeIdentifier: type, serialNumber: "C-\($0)")
            })
            let clock = rig.clock
            let service = OfferClaimService(offers: [OfferDefinition(name: "welcome", bit: bit)], store: store, deviceCheck: rig.client,
                                            now: { Double(clock.now) })
            try await body(Setup(rig: rig, store: store, reopen: reopen, service: service))
        }
    }

    func token(_ device: String) -> String { MockDeviceCheckServer.deviceToken(for: device) }

    @Test(arguments: ClaimStoreKind.allCases) func aNewDeviceGetsAPassAndItsBitIsSet(kind: ClaimStoreKind) async throws {
        try await withSetup(kind, bit: 1) { setup in
            let answer = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-1"), claimIdentifier: UUID().uuidString)
            guard case .created(let claim) = answer else { Issue.record("\(answer)"); return }
            #expect(claim.bitIsSet && claim.passTypeIdentifier == type)
            #expect(setup.rig.server.bits(of: "phone-1")! == (false, true), "bit 1 set, bit 0 kept")
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func aRetriedClaimIdentifierGetsTheSamePassAndADeviceThatClaimedGets409(kind: ClaimStoreKind) async throws {
        try await withSetup(kind) { setup in
            let id = UUID().uuidString
            guard case .created(let first) = try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) else {
                Issue.record("no pass"); return
            }
            #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: id) == .repeated(first))
            #expect(try await setup.service.claim(offer: "welcome", deviceToken: token("phone-2"), claimIdentifier: UUID().uuidString) == .alreadyClaimed)
            #expect(try await setup.store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 1, left: 2)])
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func anExhaustedPoolAnUnknownOfferAndMalformedRequests(kind: ClaimStoreKind) async throws {
        try await withSetup(kind, poolSize: 1) { setup in
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

    @Test(arguments: ClaimStoreKind.allCases, [MockDeviceCheckServer.ScriptedAnswer.tooManyRequests, .serverError, .serviceUnavailable,
                                               .init(status: 200, delay: .seconds(120))])
    func appleUnavailableMeans503AndNothingAssigned(kind: ClaimStoreKind, answer: MockDeviceCheckServer.ScriptedAnswer) async throws {
        try await withSetup(kind, timeout: .milliseconds(500)) { setup in
            setup.rig.server.failNext(answer)
            let result = try await setup.service.claim(offer: "welcome", deviceToken: token("f"), claimIdentifier: "claim-f")
            #expect(result == .unavailable(retryAfterSeconds: 5))
            #expect(try await setup.store.offerStatistics().first?.claimed == 0)
        }
    }

    /// The bit update fails after the assignment: the claim stands, the same
    /// claim identifier gets the same pass, and the background retry sets the bit.
    @Test(arguments: ClaimStoreKind.allCases) func aFailedBitUpdateIsRetriedAndNeverGivesASecondPass(kind: ClaimStoreKind) async throws {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(.init(status: 503, path: "/v1/update_two_bits"))
            let id = UUID().uuidString
            guard case .created(let claim) = try await setup.service.claim(offer: "welcome", deviceToken: token("g"), claimIdentifier: id) else {
                Issue.record("no pass"); return
            }
            #expect(!claim.bitIsSet && setup.rig.server.bits(of: "g") == nil)
            #expect(try await setup.service.retryPendingBitUpdates(minimumAge: 30) == 0, "too young: the request may still be setting it")
            setup.rig.clock.advance(by: 31)
            #expect(try await setup.service.retryPendingBitUpdates(minimumAge: 30) == 1)
            #expect(setup.rig.server.bits(of: "g")! == (true, false))
            #expect(try await setup.store.pendingBitUpdates(claimedBefore: .infinity, limit: 10).isEmpty)
            guard case .repeated(let again) = try await setup.service.claim(offer: "welcome", deviceToken: token("g"), claimIdentifier: id) else {
                Issue.record("a retry did not get its pass"); return
            }
            #expect(again.serialNumber == claim.serialNumber && again.bitIsSet)
        }
    }

    /// The bit update fails, and the app retries the same claim before the background retry runs:
    /// the retry's fresh token sets the bit then.
    @Test(arguments: ClaimStoreKind.allCases) func aRetriedClaimSetsABitTheFirstAttemptCouldNot(kind: ClaimStoreKind) async throws {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(.init(status: 503, path: "/v1/update_two_bits"))
            let id = UUID().uuidString
            guard case .created(let claim) = try await setup.service.claim(offer: "welcome", deviceToken: token("h"), claimIdentifier: id) else {
                Issue.record("no pass"); return
            }
            #expect(!claim.bitIsSet && setup.rig.server.bits(of: "h") == nil)
            guard case .repeated(let again) = try await setup.service.claim(offer: "welcome", deviceToken: token("h"), claimIdentifier: id) else {
                Issue.record("a retry did not get its pass"); return
            }
            #expect(again.serialNumber == claim.serialNumber && again.bitIsSet)
            #expect(setup.rig.server.bits(of: "h")! == (true, false))
            #expect(try await setup.store.pendingBitUpdates(claimedBefore: .infinity, limit: 10).isEmpty)
        }
    }

    /// Two servers (two services on one store) and 30 devices claiming at once, some twice with one
    /// claim identifier: each device holds at most one pass, no pass is held twice, and the bits match.
    @Test(arguments: ClaimStoreKind.allCases) func twoServersClaimingAtOnceNeverShareAPass(kind: ClaimStoreKind) async throws {
        try await withSetup(kind, poolSize: 20) { setup in
            let second = OfferClaimService(offers: [OfferDefinition(name: "welcome", bit: 0)], store: try await setup.reopen(),
                                           deviceCheck: setup.rig.client)
            let answers = try await withThrowingTaskGroup(of: (String, ClaimAnswer).self) { group in
                for device in 0..<30 {
                    for attempt in 0..<(device % 3 == 0 ? 2 : 1) {
                        let service = (device + attempt) % 2 == 0 ? setup.service : second
                        group.addTask {
                            ("d\(device)", try await service.claim(offer: "welcome", deviceToken: token("d\(device)"), claimIdentifier: "claim-d\(device)"))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var passByDevice: [String: String] = [:]
            for (device, answer) in answers {
                switch answer {
                case .created(let claim), .repeated(let claim):
                    if let held = passByDevice.updateValue(claim.serialNumber, forKey: device) {
                        #expect(held == claim.serialNumber, "device \(device) got two passes")
                    }
                case .exhausted, .alreadyClaimed: break
                default: Issue.record("\(device): \(answer)")
                }
            }
            #expect(passByDevice.count == 20 && Set(passByDevice.values).count == 20, "20 passes to 20 devices, none twice")
            for device in passByDevice.keys { #expect(setup.rig.server.bits(of: device)?.bit0 == true) }
            #expect(try await setup.store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 20, claimed: 20, left: 0)])
        }
    }
}
