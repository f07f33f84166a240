import Foundation
import PostgresNIO
package import RegistrationStore

/// DeviceCheck offers on PostgreSQL, shared by several servers: the next free
/// pass is taken with `FOR UPDATE SKIP LOCKED`, so two servers claiming at
/// once take different passes without waiting for each other, and the UNIQUE
/// constraint on a claim's pass is the last word if anything else goes wrong.
extension PostgresRegistrationStore {
    /// The same tables as the SQLite store's (see `SQLiteRegistrationStore.offerSchema`).
    static let offerMigration: (String, [String]) = (
        "v4: offer pools and claims",
        [
            """
            CREATE TABLE offer_passes (
                pass_type_identifier TEXT COLLATE "C" NOT NULL,
                serial_number TEXT COLLATE "C" NOT NULL,
                offer TEXT COLLATE "C" NOT NULL,
                in_pool BOOLEAN NOT NULL DEFAULT true,
                claimed BOOLEAN NOT NULL DEFAULT false,
                PRIMARY KEY (pass_type_identifier, serial_number)
            )
            """,
            "CREATE INDEX offer_passes_free ON offer_passes (offer, pass_type_identifier, serial_number) WHERE in_pool AND NOT claimed",
            """
            CREATE TABLE offer_claims (
                offer TEXT COLLATE "C" NOT NULL,
                claim_identifier TEXT COLLATE "C" NOT NULL,
                pass_type_identifier TEXT COLLATE "C" NOT NULL,
                serial_number TEXT COLLATE "C" NOT NULL,
                device_token TEXT,
                bit SMALLINT NOT NULL,
                claimed_at DOUBLE PRECISION NOT NULL,
                bit_set BOOLEAN NOT NULL DEFAULT false,
                PRIMARY KEY (offer, claim_identifier),
                UNIQUE (pass_type_identifier, serial_number)
            )
            """,
            "CREATE INDEX offer_claims_pending ON offer_claims (claimed_at) WHERE NOT bit_set",
        ]
    )

    /// The SHA-256 (hex) of each DeviceCheck token sent to Apple (see `SQLiteRegistrationStore.spentTokenSchema`).
    static let spentTokenMigration: (String, [String]) = (
        "v5: spent DeviceCheck tokens",
        [
            """
            CREATE TABLE spent_device_tokens (
                digest TEXT COLLATE "C" PRIMARY KEY,
                spent_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX spent_device_tokens_age ON spent_device_tokens (spent_at)",
            "UPDATE offer_claims SET device_token = NULL",
        ]
    )

    package func replaceOfferPools(with passes: [OfferPass]) async throws {
        try await transaction { connection in
            // One pool replacement at a time (two servers taking the same build).
            try await connection.perform("LOCK TABLE offer_passes IN SHARE ROW EXCLUSIVE MODE")
            try await connection.perform(
                """
                INSERT INTO offer_passes (pass_type_identifier, serial_number, offer, in_pool, claimed)
                SELECT b.t, b.s, b.o, true, EXISTS (SELECT 1 FROM offer_claims c WHERE c.pass_type_identifier = b.t AND c.serial_number = b.s)
                FROM unnest(\(passes.map(\.passTypeIdentifier))::text[], \(passes.map(\.serialNumber))::text[], \(passes.map(\.offer))::text[]) AS b(t, s, o)
                ON CONFLICT (pass_type_identifier, serial_number) DO NOTHING
                """)
            // Only the rows that change are updated, and so locked until the commit: ON CONFLICT DO UPDATE
            // locks every conflicting row even when it changes nothing, and a claim's SKIP LOCKED then
            // found the whole pool locked during a build and answered 410 with passes left (the soak).
            try await connection.perform(
                """
                UPDATE offer_passes p SET offer = b.o, in_pool = true
                FROM unnest(\(passes.map(\.passTypeIdentifier))::text[], \(passes.map(\.serialNumber))::text[], \(passes.map(\.offer))::text[]) AS b(t, s, o)
                WHERE p.pass_type_identifier = b.t AND p.serial_number = b.s AND (p.offer <> b.o OR NOT p.in_pool)
                """)
            try await connection.perform(
                """
                UPDATE offer_passes p SET in_pool = false
                WHERE p.in_pool AND NOT EXISTS (
                    SELECT 1 FROM unnest(\(passes.map(\.passTypeIdentifier))::text[], \(passes.map(\.serialNumber))::text[]) AS b(t, s)
                    WHERE b.t = p.pass_type_identifier AND b.s = p.serial_number)
                """)
        }
    }

    package func claim(offer: String, claimIdentifier: String) async throws -> OfferClaim? {
        try await leased { connection in
            try await Self.claim(connection, offer: offer, claimIdentifier: claimIdentifier)
        }
    }

    package func assignPass(offer: String, claimIdentifier: String, bit: Int, claimedAt: Double) async throws
        -> ClaimAssignment
    {
        try await transaction { connection in
            // The same claim identifier on two servers at once: the second waits here for the first's claim.
            try await connection.perform(
                "SELECT pg_advisory_xact_lock(\(LockKey.offerClaim), hashtext(\(offer + "/" + claimIdentifier)))")
            if let existing = try await Self.claim(connection, offer: offer, claimIdentifier: claimIdentifier) {
                return .existing(existing)
            }
            guard let (type, serial) = try await Self.freePass(connection, offer: offer) else { return .exhausted }
            try await connection.perform(
                """
                UPDATE offer_passes SET claimed = true WHERE pass_type_identifier = \(type) AND serial_number = \(serial)
                """)
            try await connection.perform(
                """
                INSERT INTO offer_claims (offer, claim_identifier, pass_type_identifier, serial_number, bit, claimed_at)
                VALUES (\(offer), \(claimIdentifier), \(type), \(serial), \(Int16(bit)), \(claimedAt))
                """)
            return .assigned(
                OfferClaim(
                    offer: offer, claimIdentifier: claimIdentifier, passTypeIdentifier: type, serialNumber: serial,
                    bitIsSet: false))
        }
    }

    /// The first free pass of `offer`, locked. A pass another claim holds is skipped; when every free
    /// pass is locked (a pool refresh that changes them, or claims not committed yet), the claim waits
    /// for them instead of answering that the pool is empty.
    private static func freePass(_ connection: PostgresConnection, offer: String) async throws -> (String, String)? {
        for lockClause in ["FOR UPDATE SKIP LOCKED", "FOR UPDATE"] {
            let query: PostgresQuery = """
                SELECT pass_type_identifier, serial_number FROM offer_passes
                WHERE offer = \(offer) AND in_pool AND NOT claimed ORDER BY pass_type_identifier, serial_number
                LIMIT 1 \(unescaped: lockClause)
                """
            if let pass = try await first(connection.checkedQuery(query, logger: logger), as: (String, String).self) {
                return pass
            }
        }
        return nil
    }

    package func completeBitUpdate(offer: String, claimIdentifier: String) async throws {
        try await transaction { connection in
            try await connection.perform(
                """
                UPDATE offer_claims SET bit_set = true, device_token = NULL WHERE offer = \(offer) AND claim_identifier = \(claimIdentifier)
                """)
        }
    }

    package func releaseClaim(offer: String, claimIdentifier: String) async throws -> Bool {
        try await transaction { connection in
            guard
                let (type, serial) = try await Self.first(
                    connection.checkedQuery(
                        """
                        DELETE FROM offer_claims WHERE offer = \(offer) AND claim_identifier = \(claimIdentifier) AND NOT bit_set
                        RETURNING pass_type_identifier, serial_number
                        """, logger: Self.logger), as: (String, String).self)
            else { return false }
            try await connection.perform(
                """
                UPDATE offer_passes SET claimed = false WHERE pass_type_identifier = \(type) AND serial_number = \(serial)
                """)
            return true
        }
    }

    package func unconfirmedClaims(limit: Int) async throws -> [UnconfirmedClaim] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT offer, claim_identifier, pass_type_identifier, serial_number, claimed_at FROM offer_claims
                    WHERE NOT bit_set ORDER BY claimed_at, offer, claim_identifier LIMIT \(max(0, limit))
                    """, logger: Self.logger), as: (String, String, String, String, Double).self
            )
            .map {
                UnconfirmedClaim(
                    offer: $0.0, claimIdentifier: $0.1, passTypeIdentifier: $0.2, serialNumber: $0.3, claimedAt: $0.4)
            }
        }
    }

    package func spendDeviceTokens(_ digests: [String], at time: Double) async throws -> Bool {
        let unique = Array(Set(digests))
        // One statement (committed before it returns: see `transaction`): nothing is recorded when any
        // digest was recorded before. Two requests sharing a digest at the same instant both pass NOT EXISTS;
        // the unique key then lets one record it and the other count fewer rows, so it is refused (its other,
        // fresh digest may stay recorded: a token refused without reaching Apple, which the app replaces anyway).
        let inserted = try await transaction { connection in
            try await Self.first(
                connection.checkedQuery(
                    """
                    WITH new AS (
                        INSERT INTO spent_device_tokens (digest, spent_at)
                        SELECT d, \(time) FROM unnest(\(unique)::text[]) AS d
                        WHERE NOT EXISTS (SELECT 1 FROM spent_device_tokens s WHERE s.digest = ANY(\(unique)::text[]))
                        ON CONFLICT (digest) DO NOTHING RETURNING 1)
                    SELECT COUNT(*)::bigint FROM new
                    """, logger: Self.logger), as: Int64.self) ?? 0
        }
        return inserted == Int64(unique.count)
    }

    package func purgeSpentDeviceTokens(spentBefore time: Double) async throws -> Int {
        try await transaction { connection in
            let deleted =
                try await Self.first(
                    connection.checkedQuery(
                        """
                        WITH gone AS (DELETE FROM spent_device_tokens WHERE spent_at < \(time) RETURNING 1) SELECT COUNT(*)::bigint FROM gone
                        """, logger: Self.logger), as: Int64.self) ?? 0
            return Int(deleted)
        }
    }

    package func offerStatistics() async throws -> [OfferStatistics] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT offer, SUM(pool)::bigint, SUM(claims)::bigint, SUM(free)::bigint FROM (
                        SELECT offer, in_pool::int AS pool, 0 AS claims, (in_pool AND NOT claimed)::int AS free FROM offer_passes
                        UNION ALL SELECT offer, 0, 1, 0 FROM offer_claims
                    ) AS counts GROUP BY offer ORDER BY offer
                    """, logger: Self.logger), as: (String, Int64, Int64, Int64).self
            )
            .map { OfferStatistics(offer: $0.0, poolSize: Int($0.1), claimed: Int($0.2), left: Int($0.3)) }
        }
    }

    private static func claim(_ connection: PostgresConnection, offer: String, claimIdentifier: String) async throws
        -> OfferClaim?
    {
        try await first(
            connection.checkedQuery(
                """
                SELECT pass_type_identifier, serial_number, bit_set FROM offer_claims
                WHERE offer = \(offer) AND claim_identifier = \(claimIdentifier)
                """, logger: logger), as: (String, String, Bool).self
        )
        .map {
            OfferClaim(
                offer: offer, claimIdentifier: claimIdentifier, passTypeIdentifier: $0.0, serialNumber: $0.1,
                bitIsSet: $0.2)
        }
    }
}
