import Foundation
import PostgresNIO
import PostgresRegistrationStore
import RegistrationStore
import TestSupport
import Testing

/// A claim while another transaction holds every free pass of the pool (a build's pool refresh, or
/// claims not committed yet) waits for it and gets a pass: the soak saw 410 answers with passes left,
/// because the claim's `SKIP LOCKED` found the whole pool locked by a pool refresh.
@Suite struct PostgresOfferLockTests {
    let folder = TemporaryDirectory("passforge-offer-locks")

    @Test func aClaimWaitsForLockedFreePassesInsteadOfAnsweringExhausted() async throws {
        let store = try await StoreKind.postgres.make(in: folder)
        let url = try await PostgresTestServer.database(for: folder)
        let passes = (1...3).map {
            OfferPass(offer: "welcome", passTypeIdentifier: "pass.com.example.coupon", serialNumber: "C-\($0)")
        }
        try await store.replaceOfferPools(with: passes)
        let outcome = try await PostgresTestServer.withAdmin(url) { holder in
            try await holder.query("BEGIN", logger: PostgresTestServer.logger)
            try await holder.query("UPDATE offer_passes SET offer = offer", logger: PostgresTestServer.logger)
            let claim = Task {
                try await store.assignPass(offer: "welcome", claimIdentifier: "claim-1", bit: 0, claimedAt: 1)
            }
            // Waits until the claim waits on the held rows (or has answered without waiting).
            try await PostgresTestServer.withAdmin(url) { watcher in
                for _ in 0..<200 {
                    let rows = try await watcher.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
                        logger: PostgresTestServer.logger)
                    var waiting = 0
                    for try await (count) in rows.decode(Int.self) { waiting = count }
                    if waiting > 0 { return }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            try await holder.query("COMMIT", logger: PostgresTestServer.logger)
            return try await claim.value
        }
        guard case .assigned(let claim) = outcome else {
            Issue.record("the claim answered \(outcome) while three passes were free but locked")
            return
        }
        #expect(claim.serialNumber == "C-1")
    }
}
