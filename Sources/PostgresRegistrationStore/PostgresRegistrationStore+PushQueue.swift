import Foundation
import Logging
import PostgresNIO
package import RegistrationStore

/// The push queue on PostgreSQL: pushes waiting per token and pass type, the cursor, and the push lock.
extension PostgresRegistrationStore {
    // MARK: Push queue

    package func pushCursor() async throws -> Int64? {
        try await leased { connection in
            try await Self.first(
                connection.checkedQuery("SELECT update_tag FROM push_cursor WHERE id = 1", logger: Self.logger),
                as: Int64.self)
        }
    }

    package func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int {
        let serialsByType = Dictionary(grouping: passes, by: \.passTypeIdentifier).mapValues { $0.map(\.serialNumber) }
            .sorted { $0.key < $1.key }
        return try await transaction { connection in
            let now = Date().timeIntervalSince1970
            for (type, serials) in serialsByType {
                try await connection.perform(
                    """
                    INSERT INTO push_queue (push_token, pass_type_identifier, queued_at)
                    SELECT DISTINCT d.push_token, r.pass_type_identifier, \(now)::float8
                    FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE r.pass_type_identifier = \(type) AND r.serial_number = ANY(\(serials))
                    ON CONFLICT DO NOTHING
                    """)
            }
            // The cursor only moves forward.
            try await connection.perform(
                """
                INSERT INTO push_cursor (id, update_tag) VALUES (1, \(cursor))
                ON CONFLICT (id) DO UPDATE SET update_tag = GREATEST(push_cursor.update_tag, EXCLUDED.update_tag)
                """)
            return try await Self.first(
                connection.checkedQuery("SELECT COUNT(*) FROM push_queue", logger: Self.logger), as: Int.self) ?? 0
        }
    }

    package func pendingPushes(limit: Int) async throws -> [PendingPush] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT push_token, pass_type_identifier, queued_at FROM push_queue
                    ORDER BY queued_at, push_token, pass_type_identifier LIMIT \(max(0, limit))
                    """, logger: Self.logger), as: (String, String, Double).self
            )
            .map { PendingPush(pushToken: $0.0, passTypeIdentifier: $0.1, queuedAt: $0.2) }
        }
    }

    package func completePushes(_ pushes: [PendingPush]) async throws {
        guard !pushes.isEmpty else { return }
        try await transaction { connection in
            try await connection.perform(
                """
                DELETE FROM push_queue q
                USING unnest(\(pushes.map(\.pushToken))::text[], \(pushes.map(\.passTypeIdentifier))::text[]) AS done(token, type)
                WHERE q.push_token = done.token AND q.pass_type_identifier = done.type
                """)
        }
    }

    /// A session-level advisory lock on one connection held for `body`, so it
    /// is released when `body` ends, however it ends, and by the server when
    /// the connection or the process dies.
    package func withPushLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        // Fails fast when the server is out of reach; then the lock's own connection.
        try await leased { _ in }
        let client = slot.current.client
        do {
            return try await client.withConnection { connection in
                let acquired =
                    try await Self.first(
                        connection.checkedQuery(
                            "SELECT pg_try_advisory_lock(\(LockKey.push))", logger: Self.logger), as: Bool.self)
                    ?? false
                guard acquired else { throw RegistrationStoreError.pushLockBusy }
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                do {
                    try await connection.perform("SELECT pg_advisory_unlock(\(LockKey.push))")
                } catch {
                    // Could not unlock: end the session, which releases the lock,
                    // rather than give the pool back a connection holding it.
                    try? await connection.close()
                }
                return try result.get()
            }
        } catch {
            throw PostgresStoreError.translate(error, at: location) ?? error
        }
    }
}
