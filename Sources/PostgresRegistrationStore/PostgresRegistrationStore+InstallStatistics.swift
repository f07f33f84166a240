package import Foundation
import PostgresNIO
package import RegistrationStore

/// `passforge stats` on PostgreSQL: as in the SQLite store, the registrations table for what is on a device
/// now, and counts per day and pass (a table made on first use) for registrations added and removed.
extension PostgresRegistrationStore: InstallStatisticsStore {
    package func recordRegistrationEvent(passTypeIdentifier: String, serialNumber: String, added: Bool, at date: Date)
        async throws
    {
        let day = RegistrationDayCount.day(of: date)
        let (plus, minus) = added ? (1, 0) : (0, 1)
        try await leased { connection in
            let insert: PostgresQuery = """
                INSERT INTO registration_days (day, pass_type_identifier, serial_number, added, removed)
                VALUES (\(day), \(passTypeIdentifier), \(serialNumber), \(plus), \(minus))
                ON CONFLICT (day, pass_type_identifier, serial_number)
                DO UPDATE SET added = registration_days.added + excluded.added, removed = registration_days.removed + excluded.removed
                """
            do {
                _ = try await connection.checkedQuery(insert, logger: Self.logger)
            } catch {
                // The table is made on first use (two servers may race to make it: IF NOT EXISTS, then the insert
                // again).
                try? await Self.createRegistrationDays(connection)
                _ = try await connection.checkedQuery(insert, logger: Self.logger)
            }
        }
    }

    package func passesOnDevices() async throws -> [PassDeviceCount] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT pass_type_identifier, serial_number, COUNT(*)::bigint FROM registrations
                    GROUP BY pass_type_identifier, serial_number
                    """, logger: Self.logger), as: (String, String, Int64).self
            )
            .map { PassDeviceCount(passTypeIdentifier: $0.0, serialNumber: $0.1, devices: Int($0.2)) }
        }
    }

    package func registrationEvents() async throws -> [RegistrationDayCount] {
        try await leased { connection in
            try await Self.createRegistrationDays(connection)
            return try await Self.collect(
                connection.checkedQuery(
                    "SELECT day, pass_type_identifier, serial_number, added::bigint, removed::bigint FROM registration_days",
                    logger: Self.logger), as: (String, String, String, Int64, Int64).self
            )
            .map {
                RegistrationDayCount(
                    day: $0.0, passTypeIdentifier: $0.1, serialNumber: $0.2, added: Int($0.3), removed: Int($0.4))
            }
        }
    }

    /// Made on first use, outside the store's migrations: counts only, which a store without them simply lacks.
    private static func createRegistrationDays(_ connection: PostgresConnection) async throws {
        _ = try await connection.checkedQuery(
            """
            CREATE TABLE IF NOT EXISTS registration_days (
                day TEXT NOT NULL,
                pass_type_identifier TEXT NOT NULL,
                serial_number TEXT NOT NULL,
                added INTEGER NOT NULL DEFAULT 0,
                removed INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (day, pass_type_identifier, serial_number)
            )
            """, logger: logger)
    }
}
