import Foundation
import GRDB
package import RegistrationStore

/// DeviceCheck offers in the SQLite file. One writer: a claim's read of the
/// next free pass and its insert run in one transaction (a savepoint of a
/// group commit), so no other claim can take the same pass in between.
extension SQLiteRegistrationStore {
    /// `offer_passes` lists each pool (`in_pool = 0`: removed from content);
    /// `claimed` mirrors whether a claim holds the pass, so the next free pass
    /// is one index lookup. `offer_claims` holds each claim; UNIQUE on the pass
    /// is the rule that a pass goes to one claim, ever.
    static let offerSchema = """
        CREATE TABLE offer_passes (
            pass_type_identifier TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            offer TEXT NOT NULL,
            in_pool INTEGER NOT NULL DEFAULT 1,
            claimed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (pass_type_identifier, serial_number)
        ) WITHOUT ROWID;
        CREATE INDEX offer_passes_free ON offer_passes(offer, in_pool, claimed, pass_type_identifier, serial_number);
        CREATE TABLE offer_claims (
            offer TEXT NOT NULL,
            claim_identifier TEXT NOT NULL,
            pass_type_identifier TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            device_token TEXT,
            bit INTEGER NOT NULL,
            claimed_at REAL NOT NULL,
            bit_set INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (offer, claim_identifier),
            UNIQUE (pass_type_identifier, serial_number)
        ) WITHOUT ROWID;
        CREATE INDEX offer_claims_pending ON offer_claims(bit_set, claimed_at);
        """

    /// The SHA-256 (hex) of each DeviceCheck token sent to Apple, for as long as Apple may honour it.
    /// `offer_claims.device_token` is no longer written: tokens are single-use, so none is kept for a retry.
    static let spentTokenSchema = """
        CREATE TABLE spent_device_tokens (
            digest TEXT PRIMARY KEY NOT NULL,
            spent_at REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX spent_device_tokens_age ON spent_device_tokens(spent_at);
        UPDATE offer_claims SET device_token = NULL;
        """

    package func replaceOfferPools(with passes: [OfferPass]) async throws {
        try await pool.write { db in
            try db.execute(
                sql:
                    "CREATE TEMP TABLE IF NOT EXISTS built_offer_passes (t TEXT NOT NULL, s TEXT NOT NULL, o TEXT NOT NULL)"
            )
            try db.execute(sql: "DELETE FROM built_offer_passes")
            let insert = try db.makeStatement(sql: "INSERT INTO built_offer_passes (t, s, o) VALUES (?, ?, ?)")
            for pass in passes {
                try insert.execute(arguments: [pass.passTypeIdentifier, pass.serialNumber, pass.offer])
            }
            // A pass moved to another offer keeps its claim (if any) and joins the new pool.
            try db.execute(
                sql: """
                    INSERT INTO offer_passes (pass_type_identifier, serial_number, offer, in_pool, claimed)
                    SELECT t, s, o, 1, EXISTS (SELECT 1 FROM offer_claims c WHERE c.pass_type_identifier = t AND c.serial_number = s)
                    FROM built_offer_passes WHERE true
                    ON CONFLICT (pass_type_identifier, serial_number) DO UPDATE SET offer = excluded.offer, in_pool = 1
                    """)
            try db.execute(
                sql: """
                    UPDATE offer_passes SET in_pool = 0 WHERE in_pool = 1 AND NOT EXISTS (
                        SELECT 1 FROM built_offer_passes b WHERE b.t = offer_passes.pass_type_identifier AND b.s = offer_passes.serial_number)
                    """)
            try db.execute(sql: "DELETE FROM built_offer_passes")
        }
    }

    package func claim(offer: String, claimIdentifier: String) async throws -> OfferClaim? {
        try await pool.read { db in try Self.claim(db, offer: offer, claimIdentifier: claimIdentifier) }
    }

    package func assignPass(offer: String, claimIdentifier: String, bit: Int, claimedAt: Double) async throws
        -> ClaimAssignment
    {
        try await committer.write { db in
            if let existing = try Self.claim(db, offer: offer, claimIdentifier: claimIdentifier) {
                return .existing(existing)
            }
            guard
                let free = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT pass_type_identifier, serial_number FROM offer_passes
                        WHERE offer = ? AND in_pool = 1 AND claimed = 0 ORDER BY pass_type_identifier, serial_number LIMIT 1
                        """, arguments: [offer])
            else { return .exhausted }
            let type: String = free[0]
            let serial: String = free[1]
            try db.execute(
                sql: "UPDATE offer_passes SET claimed = 1 WHERE pass_type_identifier = ? AND serial_number = ?",
                arguments: [type, serial])
            try db.execute(
                sql: """
                    INSERT INTO offer_claims (offer, claim_identifier, pass_type_identifier, serial_number, bit, claimed_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [offer, claimIdentifier, type, serial, bit, claimedAt])
            return .assigned(
                OfferClaim(
                    offer: offer, claimIdentifier: claimIdentifier, passTypeIdentifier: type, serialNumber: serial,
                    bitIsSet: false))
        }
    }

    package func completeBitUpdate(offer: String, claimIdentifier: String) async throws {
        try await committer.write { db in
            try db.execute(
                sql:
                    "UPDATE offer_claims SET bit_set = 1, device_token = NULL WHERE offer = ? AND claim_identifier = ?",
                arguments: [offer, claimIdentifier])
        }
    }

    package func releaseClaim(offer: String, claimIdentifier: String) async throws -> Bool {
        try await committer.write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        DELETE FROM offer_claims WHERE offer = ? AND claim_identifier = ? AND bit_set = 0
                        RETURNING pass_type_identifier, serial_number
                        """, arguments: [offer, claimIdentifier])
            else { return false }
            let type: String = row[0]
            let serial: String = row[1]
            try db.execute(
                sql: "UPDATE offer_passes SET claimed = 0 WHERE pass_type_identifier = ? AND serial_number = ?",
                arguments: [type, serial])
            return true
        }
    }

    package func unconfirmedClaims(limit: Int) async throws -> [UnconfirmedClaim] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT offer, claim_identifier, pass_type_identifier, serial_number, claimed_at FROM offer_claims
                    WHERE bit_set = 0 ORDER BY claimed_at, offer, claim_identifier LIMIT ?
                    """, arguments: [max(0, limit)]
            )
            .map {
                UnconfirmedClaim(
                    offer: $0[0], claimIdentifier: $0[1], passTypeIdentifier: $0[2], serialNumber: $0[3],
                    claimedAt: $0[4])
            }
        }
    }

    package func spendDeviceTokens(_ digests: [String], at time: Double) async throws -> Bool {
        try await committer.write { db in
            // One writer: nothing can record a digest between this check and the inserts.
            for digest in digests {
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM spent_device_tokens WHERE digest = ?", arguments: [digest])
                    != nil
                {
                    return false
                }
            }
            for digest in Set(digests) {
                try db.execute(
                    sql: "INSERT INTO spent_device_tokens (digest, spent_at) VALUES (?, ?)", arguments: [digest, time])
            }
            return true
        }
    }

    package func purgeSpentDeviceTokens(spentBefore time: Double) async throws -> Int {
        try await committer.write { db in
            try db.execute(sql: "DELETE FROM spent_device_tokens WHERE spent_at < ?", arguments: [time])
            return db.changesCount
        }
    }

    package func offerStatistics() async throws -> [OfferStatistics] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT offer, SUM(pool), SUM(claims), SUM(free) FROM (
                        SELECT offer, in_pool AS pool, 0 AS claims, in_pool * (1 - claimed) AS free FROM offer_passes
                        UNION ALL SELECT offer, 0, 1, 0 FROM offer_claims
                    ) GROUP BY offer ORDER BY offer
                    """
            ).map { OfferStatistics(offer: $0[0], poolSize: $0[1], claimed: $0[2], left: $0[3]) }
        }
    }

    private static func claim(_ db: Database, offer: String, claimIdentifier: String) throws -> OfferClaim? {
        try Row.fetchOne(
            db,
            sql: """
                SELECT pass_type_identifier, serial_number, bit_set FROM offer_claims WHERE offer = ? AND claim_identifier = ?
                """, arguments: [offer, claimIdentifier]
        )
        .map {
            OfferClaim(
                offer: offer, claimIdentifier: claimIdentifier, passTypeIdentifier: $0[0], serialNumber: $0[1],
                bitIsSet: $0[2])
        }
    }
}
