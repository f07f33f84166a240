package import Foundation
import GRDB
package import RegistrationStore

/// `passforge stats` in the SQLite file: the registrations table for what is on a device now, and a small
/// table of counts per day and pass (made on first use) for registrations added and removed.
extension SQLiteRegistrationStore: InstallStatisticsStore {
    static let registrationDaysSchema = """
        CREATE TABLE IF NOT EXISTS registration_days (
            day TEXT NOT NULL,
            pass_type_identifier TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            added INTEGER NOT NULL DEFAULT 0,
            removed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (day, pass_type_identifier, serial_number)
        ) WITHOUT ROWID
        """

    package func recordRegistrationEvent(passTypeIdentifier: String, serialNumber: String, added: Bool, at date: Date)
        async throws
    {
        let day = RegistrationDayCount.day(of: date)
        try await pool.write { db in
            try db.execute(sql: Self.registrationDaysSchema)
            try db.execute(
                sql: """
                    INSERT INTO registration_days (day, pass_type_identifier, serial_number, added, removed) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (day, pass_type_identifier, serial_number)
                    DO UPDATE SET added = added + excluded.added, removed = removed + excluded.removed
                    """, arguments: [day, passTypeIdentifier, serialNumber, added ? 1 : 0, added ? 0 : 1])
        }
    }

    package func passesOnDevices() async throws -> [PassDeviceCount] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT pass_type_identifier, serial_number, COUNT(*) FROM registrations GROUP BY pass_type_identifier, serial_number
                    """
            ).map { PassDeviceCount(passTypeIdentifier: $0[0], serialNumber: $0[1], devices: $0[2]) }
        }
    }

    package func registrationEvents() async throws -> [RegistrationDayCount] {
        try await pool.read { db in
            guard try db.tableExists("registration_days") else { return [] }
            return try Row.fetchAll(
                db, sql: "SELECT day, pass_type_identifier, serial_number, added, removed FROM registration_days"
            )
            .map {
                RegistrationDayCount(
                    day: $0[0], passTypeIdentifier: $0[1], serialNumber: $0[2], added: $0[3], removed: $0[4])
            }
        }
    }
}
