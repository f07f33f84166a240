import DeviceCheck
import Foundation
import MockDeviceCheck
import PassOffers
import PostgresRegistrationStore
import RegistrationStore
import SQLiteRegistrationStore
import Synchronization
import TestSupport
import Testing

/// Where the claims are kept in a test: every test runs on both.
enum ClaimStoreKind: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// A store in a place of its own, and a way to open the same place again (another server).
    func make(in folder: TemporaryDirectory) async throws -> (
        store: any RegistrationDatabase,
        reopen: @Sendable () async throws -> any RegistrationDatabase
    ) {
        switch self {
        case .sqlite:
            let path = folder.file("registrations.sqlite")
            return (try SQLiteRegistrationStore(path: path), { try SQLiteRegistrationStore(path: path) })
        case .postgres:
            let url = try PostgresTestEnvironment.freshDatabase(prefix: "claims")
            return (
                try await PostgresRegistrationStore.connect(url: url),
                { try await PostgresRegistrationStore.connect(url: url) }
            )
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
    func withSetup(
        _ kind: ClaimStoreKind, poolSize: Int = 3, bit: Int = 0, timeout: Duration = .seconds(10),
        _ body: (Setup) async throws -> Void
    ) async throws {
        try await DeviceCheckRig.with(timeout: timeout) { rig in
            let (store, reopen) = try await kind.make(in: folder)
            try await store.replaceOfferPools(
                with: (1...poolSize).map {
                    OfferPass(offer: "welcome", passTypeIdentifier: type, serialNumber: "C-\($0)")
                })
            let clock = rig.clock
            let service = OfferClaimService(
                offers: [OfferDefinition(name: "welcome", bit: bit)], store: store, deviceCheck: rig.client,
                now: { Double(clock.now) })
            try await body(Setup(rig: rig, store: store, reopen: reopen, service: service))
        }
    }

    func token(_ device: String) -> String { MockDeviceCheckServer.deviceToken(for: device) }

    /// A claim of `device` as the app sends it: two fresh tokens.
    func request(_ device: String, id: String = UUID().uuidString) -> ClaimRequest {
        ClaimRequest(claimIdentifier: id, queryToken: token(device), updateToken: token(device))
    }

    func claimed(_ setup: Setup) async throws -> Int { try await setup.store.offerStatistics().first?.claimed ?? 0 }

    @Test(arguments: ClaimStoreKind.allCases) func aNewDeviceGetsAPassItsBitSetWithTheUpdateToken(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind, bit: 1) { setup in
            let request = request("phone-1")
            let answer = try await setup.service.claim(offer: "welcome", request)
            guard case .created(let claim) = answer else {
                Issue.record("\(answer)")
                return
            }
            #expect(claim.bitIsSet && claim.passTypeIdentifier == type)
            #expect(setup.rig.server.bits(of: "phone-1")! == (false, true), "bit 1 set, bit 0 kept")
            let calls = setup.rig.server.requests.map { ($0.path, $0.deviceToken) }
            #expect(
                calls.count == 2 && calls[0] == ("/v1/query_two_bits", request.queryToken)
                    && calls[1] == ("/v1/update_two_bits", request.updateToken))
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func aRetryWithFreshTokensGetsTheSamePassAndANewClaimGets409(
        kind: ClaimStoreKind
    ) async throws {
        try await withSetup(kind) { setup in
            let id = UUID().uuidString
            guard case .created(let first) = try await setup.service.claim(offer: "welcome", request("phone-2", id: id))
            else {
                Issue.record("no pass")
                return
            }
            #expect(try await setup.service.claim(offer: "welcome", request("phone-2", id: id)) == .repeated(first))
            #expect(
                try await setup.service.claim(offer: "welcome", request("phone-2", id: id.lowercased()))
                    == .repeated(first), "any case")
            #expect(try await setup.service.claim(offer: "welcome", request("phone-2")) == .alreadyClaimed)
            #expect(
                try await setup.store.offerStatistics() == [
                    OfferStatistics(offer: "welcome", poolSize: 3, claimed: 1, left: 2)
                ])
            #expect(setup.rig.server.tokensSentTwice.isEmpty)
        }
    }

    /// A claim identifier is a bearer secret: another device sending it (with real tokens) does not get the pass.
    @Test(arguments: ClaimStoreKind.allCases) func aLeakedClaimIdentifierDoesNotHandThePassToAnotherDevice(
        kind: ClaimStoreKind
    ) async throws {
        try await withSetup(kind) { setup in
            let id = UUID().uuidString
            _ = try await setup.service.claim(offer: "welcome", request("owner", id: id))
            #expect(try await setup.service.claim(offer: "welcome", request("thief", id: id)) == .claimOfAnotherDevice)
            #expect(setup.rig.server.bits(of: "thief") == nil)
            #expect(try await claimed(setup) == 1)
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func aReplayedRequestIsRefusedWithoutAskingApple(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind) { setup in
            let captured = request("phone-3")
            guard case .created = try await setup.service.claim(offer: "welcome", captured) else {
                Issue.record("no pass")
                return
            }
            let asked = setup.rig.server.requests.count
            var replay = captured
            replay.claimIdentifier = UUID().uuidString
            #expect(try await setup.service.claim(offer: "welcome", replay) == .tokenReused)
            #expect(
                try await setup.service.claim(offer: "welcome", captured) == .tokenReused,
                "also with its own identifier")
            // One fresh token and one spent: refused too, and the fresh one is not spent by the refusal.
            let fresh = token("phone-3")
            #expect(
                try await setup.service.claim(
                    offer: "welcome",
                    ClaimRequest(
                        claimIdentifier: UUID().uuidString, queryToken: fresh,
                        updateToken: captured.updateToken)) == .tokenReused)
            #expect(setup.rig.server.requests.count == asked, "Apple is not asked for a replay")
            let same = token("phone-4")
            guard
                case .badRequest = try await setup.service.claim(
                    offer: "welcome",
                    ClaimRequest(
                        claimIdentifier: UUID().uuidString,
                        queryToken: same, updateToken: same))
            else {
                Issue.record("one token for both calls was accepted")
                return
            }
            #expect(
                try await setup.service.claim(
                    offer: "welcome",
                    ClaimRequest(
                        claimIdentifier: UUID().uuidString, queryToken: fresh,
                        updateToken: token("phone-3"))) == .alreadyClaimed)
        }
    }

    /// Issue 30: one captured request sent 20 times at once with different claim identifiers gets one pass.
    @Test(arguments: ClaimStoreKind.allCases) func oneCapturedRequestRacedTwentyTimesGetsOnePass(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind, poolSize: 20) { setup in
            let captured = request("racer")
            let answers = try await withThrowingTaskGroup(of: ClaimAnswer.self) { group in
                for _ in 0..<20 {
                    var attempt = captured
                    attempt.claimIdentifier = UUID().uuidString
                    group.addTask { try await setup.service.claim(offer: "welcome", attempt) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { if case .created = $0 { true } else { false } }.count == 1)
            #expect(answers.filter { $0 == .tokenReused }.count == 19)
            #expect(setup.rig.server.tokensSentTwice.isEmpty, "no token reaches Apple twice")
            #expect(try await claimed(setup) == 1)
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func anExhaustedPoolAnUnknownOfferAndMalformedRequests(
        kind: ClaimStoreKind
    ) async throws {
        try await withSetup(kind, poolSize: 1) { setup in
            _ = try await setup.service.claim(offer: "welcome", request("a"))
            #expect(try await setup.service.claim(offer: "welcome", request("b")) == .exhausted)
            #expect(setup.rig.server.bits(of: "b") == nil, "no bit set when nothing was assigned")
            #expect(try await setup.service.claim(offer: "nope", request("c")) == .unknownOffer)
            let identifiers = [
                "", "x", "claim-d", String(repeating: "x", count: 36), "6F9619FF8B86D011B42D00C04FC964FF",
                "{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "6F9619FF-8B86-D011-B42D-00C04FC964FF ",
            ]
            for id in identifiers {
                guard case .badRequest = try await setup.service.claim(offer: "welcome", request("d", id: id)) else {
                    Issue.record("accepted \(id.debugDescription)")
                    continue
                }
            }
            for (query, update) in [("not base64!", token("d")), (token("d"), "AAA"), (token("d"), "")] {
                guard
                    case .badRequest = try await setup.service.claim(
                        offer: "welcome",
                        ClaimRequest(claimIdentifier: UUID().uuidString, queryToken: query, updateToken: update))
                else {
                    Issue.record("accepted a malformed token")
                    continue
                }
            }
            setup.rig.server.failNext(.badDeviceToken)
            guard case .badRequest = try await setup.service.claim(offer: "welcome", request("e")) else {
                Issue.record("Apple's Bad Device Token is not a 400")
                return
            }
        }
    }

    @Test(
        arguments: ClaimStoreKind.allCases,
        [
            MockDeviceCheckServer.ScriptedAnswer.tooManyRequests, .serverError, .serviceUnavailable,
            .init(status: 200, delay: .seconds(120)),
        ])
    func appleUnavailableMeans503AndNothingAssigned(kind: ClaimStoreKind, answer: MockDeviceCheckServer.ScriptedAnswer)
        async throws
    {
        try await withSetup(kind, timeout: .milliseconds(500)) { setup in
            setup.rig.server.failNext(answer)
            let result = try await setup.service.claim(offer: "welcome", request("f"))
            #expect(result == .unavailable(retryAfterSeconds: 5))
            #expect(try await claimed(setup) == 0)
        }
    }

    /// Issue 30: a 200 that is not one of Apple's two documented answers is not "never claimed".
    @Test(
        arguments: ClaimStoreKind.allCases,
        [
            MockDeviceCheckServer.ScriptedAnswer(
                status: 200, body: "<html><body>Down for maintenance</body></html>", contentType: "text/html"),
            .init(status: 200, body: ""), .init(status: 200, body: "OK"),
            .init(status: 200, body: #"{"status":"ok"}"#, contentType: "application/json"),
            .init(status: 200, body: #"{"bit0":0,"bit1":0}"#, contentType: "application/json"),
            .init(status: 200, body: #"{"bit0":false}"#, contentType: "application/json"),
        ])
    func anAnswerOutsideApplesShapeHandsOutNothing(kind: ClaimStoreKind, answer: MockDeviceCheckServer.ScriptedAnswer)
        async throws
    {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(answer)
            let result = try await setup.service.claim(offer: "welcome", request("g"))
            #expect(result == .unavailable(retryAfterSeconds: 5))
            #expect(try await claimed(setup) == 0)
            #expect(setup.rig.server.bits(of: "g") == nil)
        }
    }

    /// Apple refuses the update: it set nothing, so the pass goes back to the pool and no pass is handed out.
    @Test(arguments: ClaimStoreKind.allCases) func aRefusedUpdateReturnsThePassToThePool(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind, poolSize: 1) { setup in
            setup.rig.server.failNext(
                .init(
                    status: 400, body: "Missing or incorrectly formatted device token payload",
                    path: "/v1/update_two_bits"))
            guard case .badRequest = try await setup.service.claim(offer: "welcome", request("h")) else {
                Issue.record("not a 400")
                return
            }
            #expect(try await claimed(setup) == 0)
            #expect(try await setup.store.unconfirmedClaims(limit: 10).isEmpty)
            guard case .created = try await setup.service.claim(offer: "welcome", request("h")) else {
                Issue.record("the pass was lost")
                return
            }
        }
    }

    /// The update's answer is lost: the claim stays unconfirmed (the pass is not handed out) until the app
    /// retries the same claim, whose own update token sets the bit.
    @Test(arguments: ClaimStoreKind.allCases) func aLostUpdateIsCompletedByTheRetrysOwnToken(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(.init(status: 503, path: "/v1/update_two_bits"))
            let id = UUID().uuidString
            #expect(
                try await setup.service.claim(offer: "welcome", request("i", id: id))
                    == .unavailable(retryAfterSeconds: 5))
            let pending = try await setup.store.unconfirmedClaims(limit: 10)
            #expect(pending.map(\.claimIdentifier) == [id] && setup.rig.server.bits(of: "i") == nil)
            let retry = request("i", id: id)
            guard case .repeated(let again) = try await setup.service.claim(offer: "welcome", retry) else {
                Issue.record("a retry did not get its pass")
                return
            }
            #expect(again.serialNumber == pending[0].serialNumber && again.bitIsSet)
            #expect(setup.rig.server.bits(of: "i")! == (true, false))
            #expect(
                setup.rig.server.requests.last?.deviceToken == retry.updateToken, "set with the retry's update token")
            #expect(try await setup.store.unconfirmedClaims(limit: 10).isEmpty)
            #expect(setup.rig.server.tokensSentTwice.isEmpty)
        }
    }

    /// The update reached Apple but its answer was lost: the retry sees the bit set and sends no update.
    @Test(arguments: ClaimStoreKind.allCases) func aRetryAfterAnUpdateThatLandedSendsNoUpdate(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(.init(status: 500, path: "/v1/update_two_bits"))
            let id = UUID().uuidString
            _ = try await setup.service.claim(offer: "welcome", request("j", id: id))
            setup.rig.server.setBits(of: "j", bit0: true, bit1: false)
            let before = setup.rig.server.requests.count
            guard case .repeated(let claim) = try await setup.service.claim(offer: "welcome", request("j", id: id))
            else {
                Issue.record("no pass")
                return
            }
            #expect(claim.bitIsSet && setup.rig.server.requests.count == before + 1, "a query only")
        }
    }

    /// Issue 30: a wrong key is not an outage: 500 (no retry), logged once per cause, cleared by an accepted call.
    @Test(arguments: ClaimStoreKind.allCases) func aRefusedKeyIsAMisconfigurationReportedOncePerCause(
        kind: ClaimStoreKind
    ) async throws {
        try await withSetup(kind) { setup in
            setup.rig.server.failNext(.invalidAuthorizationToken, .invalidAuthorizationToken, .forbidden)
            guard case .misconfigured(let first?) = try await setup.service.claim(offer: "welcome", request("k")) else {
                Issue.record("a 401 is not a misconfiguration with a cause to log")
                return
            }
            #expect(first.contains("401"))
            #expect(
                try await setup.service.claim(offer: "welcome", request("k")) == .misconfigured(newCause: nil),
                "logged once")
            guard case .misconfigured(let other?) = try await setup.service.claim(offer: "welcome", request("k")) else {
                Issue.record("a 403 is a cause of its own")
                return
            }
            #expect(
                other.contains("403") && setup.service.status.misconfiguration != nil
                    && setup.service.status.refusals == 3)
            #expect(try await claimed(setup) == 0)
            guard case .created = try await setup.service.claim(offer: "welcome", request("k")) else {
                Issue.record("no pass")
                return
            }
            #expect(setup.service.status.misconfiguration == nil)
        }
    }

    /// Issue 30 measures a real timeout: Apple sends its headers at once and its body over 25 s; the claim ends
    /// in 503 at the 10 s deadline, within issue 30's 15 s. (This test waits about 10 s on purpose.)
    @Test func aTricklingAnswerEndsAt503WithinFifteenSeconds() async throws {
        try await withSetup(.sqlite) { setup in
            setup.rig.server.failNext(
                .init(
                    status: 200, body: #"{"bit0":false,"bit1":false,"last_update_time":"2026-11"}"#,
                    trickle: .seconds(25), contentType: "application/json"))
            let start = ContinuousClock.now
            let result = try await setup.service.claim(offer: "welcome", request("slow"))
            #expect(result == .unavailable(retryAfterSeconds: 5))
            let elapsed = ContinuousClock.now - start
            // The deadline is 10 s (alone this test reads 10.0 s). The bound allows for a test runner whose two threads
            // other tests hold; it still fails any claim that waited for the 25 s body.
            #expect(elapsed < .seconds(20) && elapsed >= .seconds(9), "\(elapsed)")
            #expect(try await claimed(setup) == 0)
        }
    }

    @Test(arguments: ClaimStoreKind.allCases) func spentTokensAreForgottenAfterTheRetention(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind) { setup in
            _ = try await setup.service.claim(offer: "welcome", request("l"))
            #expect(try await setup.service.purgeSpentTokens() == 0)
            setup.rig.clock.advance(by: Int64(OfferClaimService.defaultTokenRetention) + 1)
            #expect(try await setup.service.purgeSpentTokens() == 2)
        }
    }

    /// Two servers (two services on one store) and 30 devices claiming at once, some twice with one
    /// claim identifier: each device holds at most one pass, no pass is held twice, and the bits match.
    @Test(arguments: ClaimStoreKind.allCases) func twoServersClaimingAtOnceNeverShareAPass(kind: ClaimStoreKind)
        async throws
    {
        try await withSetup(kind, poolSize: 20) { setup in
            let second = OfferClaimService(
                offers: [OfferDefinition(name: "welcome", bit: 0)], store: try await setup.reopen(),
                deviceCheck: setup.rig.client)
            let identifiers = (0..<30).map { _ in UUID().uuidString }
            let answers = try await withThrowingTaskGroup(of: (String, ClaimAnswer).self) { group in
                for device in 0..<30 {
                    for attempt in 0..<(device % 3 == 0 ? 2 : 1) {
                        let service = (device + attempt) % 2 == 0 ? setup.service : second
                        let request = request("d\(device)", id: identifiers[device])
                        group.addTask { ("d\(device)", try await service.claim(offer: "welcome", request)) }
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
                // The same claim identifier in flight on the other server: that one is setting the bit.
                case .exhausted, .alreadyClaimed, .unavailable: break
                default: Issue.record("\(device): \(answer)")
                }
            }
            #expect(
                passByDevice.count == 20 && Set(passByDevice.values).count == 20, "20 passes to 20 devices, none twice")
            for device in passByDevice.keys { #expect(setup.rig.server.bits(of: device)?.bit0 == true) }
            #expect(
                try await setup.store.offerStatistics() == [
                    OfferStatistics(offer: "welcome", poolSize: 20, claimed: 20, left: 0)
                ])
            #expect(setup.rig.server.tokensSentTwice.isEmpty)
        }
    }
}
