import Foundation
import RegistrationStore
import TestSupport
import Testing

/// The offer pools and claims every store keeps (DeviceCheck offers), on SQLite and PostgreSQL.
@Suite struct OfferClaimStoreContractTests {
    let folder = TemporaryDirectory("passforge-offers")
    let type = "pass.com.example.coupon"

    func pool(_ offer: String, _ serials: ClosedRange<Int>) -> [OfferPass] {
        serials.map { OfferPass(offer: offer, passTypeIdentifier: type, serialNumber: String(format: "C-%04d", $0)) }
    }

    @Test(arguments: StoreKind.allCases) func eachClaimGetsADifferentPassUntilThePoolIsExhausted(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        try await store.replaceOfferPools(with: pool("welcome", 1...3))
        var serials: [String] = []
        for claim in 1...3 {
            guard
                case .assigned(let assigned) = try await store.assignPass(
                    offer: "welcome", claimIdentifier: "claim-\(claim)",
                    bit: 0, claimedAt: 1)
            else {
                Issue.record("claim \(claim) got no pass")
                return
            }
            #expect(assigned.offer == "welcome" && !assigned.bitIsSet)
            serials.append(assigned.serialNumber)
        }
        #expect(Set(serials) == ["C-0001", "C-0002", "C-0003"])
        #expect(
            try await store.assignPass(offer: "welcome", claimIdentifier: "claim-4", bit: 0, claimedAt: 1) == .exhausted
        )
        #expect(
            try await store.assignPass(offer: "unknown", claimIdentifier: "claim-1", bit: 0, claimedAt: 1) == .exhausted
        )
        #expect(
            try await store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 3, left: 0)])
    }

    @Test(arguments: StoreKind.allCases) func aRetriedClaimIdentifierGetsTheSamePassNeverASecond(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        try await store.replaceOfferPools(with: pool("welcome", 1...5))
        let first = try await store.assignPass(offer: "welcome", claimIdentifier: "retry-me", bit: 1, claimedAt: 1)
        guard case .assigned(let claim) = first else {
            Issue.record("no pass: \(first)")
            return
        }
        let again = try await store.assignPass(offer: "welcome", claimIdentifier: "retry-me", bit: 1, claimedAt: 2)
        #expect(again == .existing(claim))
        #expect(try await store.claim(offer: "welcome", claimIdentifier: "retry-me") == claim)
        #expect(try await store.claim(offer: "welcome", claimIdentifier: "never") == nil)
        #expect(try await store.offerStatistics().first?.claimed == 1)
    }

    @Test(arguments: StoreKind.allCases) func unconfirmedClaimsAreListedAndARefusedOneGoesBackToThePool(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        try await store.replaceOfferPools(with: pool("welcome", 1...3))
        _ = try await store.assignPass(offer: "welcome", claimIdentifier: "a", bit: 1, claimedAt: 10)
        guard
            case .assigned(let b) = try await store.assignPass(
                offer: "welcome", claimIdentifier: "b", bit: 1, claimedAt: 20)
        else {
            Issue.record("no pass")
            return
        }
        #expect(try await store.unconfirmedClaims(limit: 10).map(\.claimIdentifier) == ["a", "b"])
        #expect(
            try await store.unconfirmedClaims(limit: 1)
                == [
                    UnconfirmedClaim(
                        offer: "welcome", claimIdentifier: "a", passTypeIdentifier: type, serialNumber: "C-0001",
                        claimedAt: 10)
                ])
        try await store.completeBitUpdate(offer: "welcome", claimIdentifier: "a")
        #expect(try await store.unconfirmedClaims(limit: 10).map(\.claimIdentifier) == ["b"])
        #expect(try await store.claim(offer: "welcome", claimIdentifier: "a")?.bitIsSet == true)
        // A confirmed claim is never released; an unconfirmed one gives its pass back.
        #expect(try await store.releaseClaim(offer: "welcome", claimIdentifier: "a") == false)
        #expect(try await store.releaseClaim(offer: "welcome", claimIdentifier: "b") == true)
        #expect(try await store.releaseClaim(offer: "welcome", claimIdentifier: "b") == false)
        #expect(try await store.claim(offer: "welcome", claimIdentifier: "b") == nil)
        #expect(
            try await store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 1, left: 2)])
        guard
            case .assigned(let c) = try await store.assignPass(
                offer: "welcome", claimIdentifier: "c", bit: 1, claimedAt: 30)
        else {
            Issue.record("no pass")
            return
        }
        #expect(c.serialNumber == b.serialNumber, "the released pass is handed out again")
    }

    @Test(arguments: StoreKind.allCases) func aSpentTokenIsRefusedAllOrNoneUntilPurged(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        let (q1, u1, q2) = (
            String(repeating: "a", count: 64), String(repeating: "b", count: 64), String(repeating: "c", count: 64)
        )
        #expect(try await store.spendDeviceTokens([q1, u1], at: 100))
        #expect(try await store.spendDeviceTokens([q1, q2], at: 200) == false, "q1 was spent")
        // All or none: q2 was not recorded by the refused call.
        #expect(try await store.spendDeviceTokens([q2], at: 300))
        #expect(try await store.purgeSpentDeviceTokens(spentBefore: 250) == 2)
        #expect(try await store.spendDeviceTokens([q1, u1], at: 400), "forgotten after the purge")
        #expect(try await store.spendDeviceTokens([q2], at: 400) == false)
    }

    /// Two stores on one database (two servers), one token pair spent 20 times at once: one call wins.
    @Test(arguments: StoreKind.allCases) func aTokenSpentOnTwoServersAtOnceWinsOnce(kind: StoreKind) async throws {
        let first = try await kind.make(in: folder)
        let second = try await kind.make(in: folder)
        let digests = [String(repeating: "d", count: 64), String(repeating: "e", count: 64)]
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for attempt in 0..<20 {
                let store = attempt % 2 == 0 ? first : second
                group.addTask { try await store.spendDeviceTokens(digests, at: Double(attempt)) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }

    @Test(arguments: StoreKind.allCases) func aRemovedPassLeavesItsPoolButAClaimedPassStaysClaimed(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        try await store.replaceOfferPools(with: pool("welcome", 1...3))
        guard
            case .assigned(let claimed) = try await store.assignPass(
                offer: "welcome", claimIdentifier: "x", bit: 0, claimedAt: 1)
        else {
            Issue.record("no pass")
            return
        }
        // The next build drops the claimed pass and one free pass from content.
        let kept = pool("welcome", 1...3).filter { $0.serialNumber != claimed.serialNumber }
        try await store.replaceOfferPools(with: [kept[0]])
        #expect(
            try await store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 1, claimed: 1, left: 1)])
        guard
            case .assigned(let next) = try await store.assignPass(
                offer: "welcome", claimIdentifier: "y", bit: 0, claimedAt: 2)
        else {
            Issue.record("no pass")
            return
        }
        #expect(next.serialNumber == kept[0].serialNumber)
        // Every pass back in content: the claimed ones come back claimed, the removed free one is free again.
        try await store.replaceOfferPools(with: pool("welcome", 1...3))
        #expect(
            try await store.offerStatistics() == [OfferStatistics(offer: "welcome", poolSize: 3, claimed: 2, left: 1)])
        guard
            case .assigned(let last) = try await store.assignPass(
                offer: "welcome", claimIdentifier: "z", bit: 0, claimedAt: 3)
        else {
            Issue.record("no pass")
            return
        }
        #expect(last.serialNumber == kept[1].serialNumber)
        #expect(try await store.claim(offer: "welcome", claimIdentifier: "x")?.serialNumber == claimed.serialNumber)
    }

    /// Two stores on one database (two servers), 40 claims each at once: no pass is handed out twice.
    @Test(arguments: StoreKind.allCases) func concurrentClaimsFromTwoStoresNeverShareAPass(kind: StoreKind) async throws
    {
        let first = try await kind.make(in: folder)
        let second = try await kind.make(in: folder)
        try await first.replaceOfferPools(with: pool("welcome", 1...60))
        let outcomes = try await withThrowingTaskGroup(of: ClaimAssignment.self) { group in
            for claim in 0..<80 {
                let store = claim % 2 == 0 ? first : second
                group.addTask {
                    try await store.assignPass(
                        offer: "welcome", claimIdentifier: "claim-\(claim % 70)", bit: 0,
                        claimedAt: Double(claim))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var byClaim: [String: String] = [:]
        for case .assigned(let claim) in outcomes {
            #expect(
                byClaim.updateValue(claim.serialNumber, forKey: claim.claimIdentifier) == nil,
                "one pass per claim identifier")
        }
        #expect(byClaim.count == 60 && Set(byClaim.values).count == 60, "60 passes to 60 different claims")
        // The other 20 requests: the second of a claim identifier sent twice gets `.existing`, unless the pool ran out
        // before its first (both are `.exhausted` then, which the order of 80 concurrent tasks decides).
        let existing = outcomes.filter { if case .existing = $0 { true } else { false } }.count
        #expect(outcomes.filter { $0 == .exhausted }.count + existing == 20 && existing <= 10)
        for case .existing(let claim) in outcomes { #expect(byClaim[claim.claimIdentifier] == claim.serialNumber) }
    }
}
