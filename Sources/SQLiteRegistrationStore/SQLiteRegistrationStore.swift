import AtomicFiles
package import ConcurrencySupport
import Foundation
import GRDB
package import RegistrationStore

/// The registration store in one SQLite file (GRDB): WAL, foreign keys,
/// `synchronous = FULL`, schema by migrations.
///
/// Every acknowledged change is on disk: a change returns only after the
/// transaction holding it committed and SQLite synced the write-ahead log.
/// Concurrent changes share commits (group commit), so one fsync
/// acknowledges many registrations.
package final class SQLiteRegistrationStore: RegistrationDatabase {
    package let path: String
    let pool: DatabasePool
    let committer: GroupCommitter
    private let logLimit: Int

    /// Opens (creating when needed, with its folder) and migrates the file. Commits, which wait for
    /// fsync, run on `blockingPool` (the command's); one at a time, so one thread of it is enough.
    package init(
        path: String, logLimit: Int = SQLiteRegistrationStore.defaultLogLimit,
        blockingPool: BlockingPool = BlockingPool(threadCount: 1)
    ) throws {
        self.path = path
        self.logLimit = max(1, logLimit)
        let folder = (path as NSString).deletingLastPathComponent
        try AtomicFileSystem.createDirectory(folder)

        var configuration = Configuration()
        configuration.label = "passforge.registrations"
        configuration.foreignKeysEnabled = true
        // Another process (`passforge push`) may write at the same time: wait for it.
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            // Readers and writer alike: never lose an acknowledged commit, even on power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        // DatabasePool turns on WAL after preparing the writer, and sets
        // `synchronous = NORMAL` with it (safe against a crashed process, not
        // against a lost machine). Put FULL back on the one writer connection.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        try Self.migrator.migrate(pool)
        committer = GroupCommitter(database: pool, blockingPool: blockingPool)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: devices, registrations, logs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE devices (
                        id INTEGER PRIMARY KEY,
                        library_identifier TEXT NOT NULL UNIQUE,
                        push_token TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE INDEX devices_by_push_token ON devices(push_token);
                    CREATE TABLE registrations (
                        device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                        pass_type_identifier TEXT NOT NULL,
                        serial_number TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        PRIMARY KEY (device_id, pass_type_identifier, serial_number)
                    ) WITHOUT ROWID;
                    CREATE INDEX registrations_by_pass ON registrations(pass_type_identifier, serial_number);
                    CREATE TABLE device_logs (
                        id INTEGER PRIMARY KEY,
                        received_at REAL NOT NULL,
                        message TEXT NOT NULL
                    );
                    CREATE TABLE store_revision (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        value INTEGER NOT NULL
                    );
                    INSERT INTO store_revision (id, value) VALUES (1, 0);
                    """)
        }
        migrator.registerMigration("v2: push queue") { db in
            try db.execute(
                sql: """
                    CREATE TABLE push_queue (
                        push_token TEXT NOT NULL,
                        pass_type_identifier TEXT NOT NULL,
                        queued_at REAL NOT NULL,
                        PRIMARY KEY (push_token, pass_type_identifier)
                    ) WITHOUT ROWID;
                    CREATE INDEX push_queue_by_age ON push_queue(queued_at);
                    CREATE TABLE push_cursor (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        update_tag INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v4: offer pools and claims") { db in
            try db.execute(sql: offerSchema)
        }
        migrator.registerMigration("v5: spent DeviceCheck tokens") { db in
            try db.execute(sql: spentTokenSchema)
        }
        return migrator
    }

    // MARK: Changes

    package func register(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String)
        async throws -> RegistrationChange
    {
        // Devices register again (a restore, a reinstall): answer those from a
        // read, without a commit. Readers see only committed, synced data.
        let existing = try await pool.read { db -> RegistrationChange? in
            guard
                let deviceID = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT d.id FROM devices d JOIN registrations r ON r.device_id = d.id
                        WHERE d.library_identifier = ? AND d.push_token = ? AND r.pass_type_identifier = ? AND r.serial_number = ?
                        """, arguments: [device, pushToken, passTypeIdentifier, serialNumber])
            else { return nil }
            return RegistrationChange(
                outcome: .unchanged,
                index: try Self.index(db, deviceID: deviceID, device: device, passTypeIdentifier: passTypeIdentifier),
                revision: try Int64.fetchOne(db, sql: "SELECT value FROM store_revision WHERE id = 1") ?? 0)
        }
        if let existing { return existing }
        return try await committer.write { db in
            let now = Date().timeIntervalSince1970
            let outcome: RegistrationOutcome
            let deviceID: Int64
            if let row = try Row.fetchOne(
                db, sql: "SELECT id, push_token FROM devices WHERE library_identifier = ?", arguments: [device])
            {
                deviceID = row["id"]
                let tokenChanged = (row["push_token"] as String) != pushToken
                if tokenChanged {
                    try db.execute(
                        sql: "UPDATE devices SET push_token = ?, updated_at = ? WHERE id = ?",
                        arguments: [pushToken, now, deviceID])
                }
                try db.execute(
                    sql: """
                        INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
                        VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """, arguments: [deviceID, passTypeIdentifier, serialNumber, now])
                outcome = db.changesCount == 1 ? .created : tokenChanged ? .pushTokenReplaced : .unchanged
            } else {
                try db.execute(
                    sql:
                        "INSERT INTO devices (library_identifier, push_token, created_at, updated_at) VALUES (?, ?, ?, ?)",
                    arguments: [device, pushToken, now, now])
                deviceID = db.lastInsertedRowID
                try db.execute(
                    sql:
                        "INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [deviceID, passTypeIdentifier, serialNumber, now])
                outcome = .created
            }
            return RegistrationChange(
                outcome: outcome,
                index: try Self.index(db, deviceID: deviceID, device: device, passTypeIdentifier: passTypeIdentifier),
                revision: try Self.nextRevision(db))
        }
    }

    package func unregister(device: String, passTypeIdentifier: String, serialNumber: String) async throws
        -> RegistrationChange
    {
        try await committer.write { db in
            guard
                let deviceID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM devices WHERE library_identifier = ?", arguments: [device])
            else {
                return RegistrationChange(
                    outcome: .notRegistered,
                    index: DeviceIndex(device: device, passTypeIdentifier: passTypeIdentifier, serialNumbers: []),
                    revision: try Self.nextRevision(db))
            }
            try db.execute(
                sql: "DELETE FROM registrations WHERE device_id = ? AND pass_type_identifier = ? AND serial_number = ?",
                arguments: [deviceID, passTypeIdentifier, serialNumber])
            let outcome: RegistrationOutcome = db.changesCount == 1 ? .removed : .notRegistered
            // Apple: delete the device entry when it has no more registrations.
            try db.execute(
                sql:
                    "DELETE FROM devices WHERE id = ? AND NOT EXISTS (SELECT 1 FROM registrations WHERE device_id = ?)",
                arguments: [deviceID, deviceID])
            return RegistrationChange(
                outcome: outcome,
                index: try Self.index(db, deviceID: deviceID, device: device, passTypeIdentifier: passTypeIdentifier),
                revision: try Self.nextRevision(db))
        }
    }

    package func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange] {
        try await committer.write { db in
            // `updated_at` is when the device last set its push token.
            let condition = "push_token = ? AND (? IS NULL OR updated_at < ?)"
            let arguments: StatementArguments = [pushToken, invalidSince, invalidSince]
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT d.library_identifier AS device, r.pass_type_identifier AS type
                    FROM devices d JOIN registrations r ON r.device_id = d.id
                    WHERE d.id IN (SELECT id FROM devices WHERE \(condition)) ORDER BY 1, 2
                    """, arguments: arguments)
            try db.execute(sql: "DELETE FROM devices WHERE \(condition)", arguments: arguments)
            let revision = try Self.nextRevision(db)
            return rows.map { row in
                RegistrationChange(
                    outcome: .removed,
                    index: DeviceIndex(device: row["device"], passTypeIdentifier: row["type"], serialNumbers: []),
                    revision: revision)
            }
        }
    }

    // MARK: Push queue

    package func pushCursor() async throws -> Int64? {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT update_tag FROM push_cursor WHERE id = 1") }
    }

    package func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int {
        let serialsByType = Dictionary(grouping: passes, by: \.passTypeIdentifier).mapValues { $0.map(\.serialNumber) }
        return try await committer.write { db in
            let now = Date().timeIntervalSince1970
            for (type, serials) in serialsByType {
                for chunk in Self.chunked(serials) {
                    try db.execute(
                        sql: """
                            INSERT INTO push_queue (push_token, pass_type_identifier, queued_at)
                            SELECT DISTINCT d.push_token, r.pass_type_identifier, ? FROM registrations r JOIN devices d ON d.id = r.device_id
                            WHERE r.pass_type_identifier = ? AND r.serial_number IN (\(Self.placeholders(chunk.count)))
                            ON CONFLICT DO NOTHING
                            """, arguments: StatementArguments([now, type] as [any DatabaseValueConvertible] + chunk))
                }
            }
            try db.execute(
                sql: """
                    INSERT INTO push_cursor (id, update_tag) VALUES (1, ?)
                    ON CONFLICT (id) DO UPDATE SET update_tag = MAX(update_tag, excluded.update_tag)
                    """, arguments: [cursor])
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_queue") ?? 0
        }
    }

    package func pendingPushes(limit: Int) async throws -> [PendingPush] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT push_token, pass_type_identifier, queued_at FROM push_queue ORDER BY queued_at, push_token, pass_type_identifier LIMIT ?
                    """, arguments: [max(0, limit)]
            )
            .map {
                PendingPush(
                    pushToken: $0["push_token"], passTypeIdentifier: $0["pass_type_identifier"],
                    queuedAt: $0["queued_at"])
            }
        }
    }

    package func completePushes(_ pushes: [PendingPush]) async throws {
        guard !pushes.isEmpty else { return }
        try await committer.write { db in
            for push in pushes {
                try db.execute(
                    sql: "DELETE FROM push_queue WHERE push_token = ? AND pass_type_identifier = ?",
                    arguments: [push.pushToken, push.passTypeIdentifier])
            }
        }
    }

    package func withPushLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard let lock = try FileLock.acquire(path + ".push-lock", blocking: false) else {
            throw RegistrationStoreError.pushLockBusy
        }
        defer { lock.release() }
        return try await body()
    }

    package func appendLog(_ messages: [String], receivedAt: Double) async throws {
        guard !messages.isEmpty else { return }
        let limit = logLimit
        try await committer.write { db in
            for message in messages {
                try db.execute(
                    sql: "INSERT INTO device_logs (received_at, message) VALUES (?, ?)",
                    arguments: [receivedAt, message])
            }
            // Ids only grow (the newest row is never deleted), so this keeps the newest `limit`.
            try db.execute(
                sql: "DELETE FROM device_logs WHERE id <= (SELECT MAX(id) FROM device_logs) - ?", arguments: [limit])
        }
    }

    // MARK: Reads

    package func serialNumbers(device: String, passTypeIdentifier: String) async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE d.library_identifier = ? AND r.pass_type_identifier = ? ORDER BY r.serial_number
                    """, arguments: [device, passTypeIdentifier])
        }
    }

    package func index(device: String, passTypeIdentifier: String) async throws -> DeviceIndex {
        DeviceIndex(
            device: device, passTypeIdentifier: passTypeIdentifier,
            serialNumbers: try await serialNumbers(device: device, passTypeIdentifier: passTypeIdentifier))
    }

    package func indices(holding passTypeIdentifier: String, serialNumbers: [String]) async throws -> [DeviceIndex] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await pool.read { db in
            var result: [DeviceIndex] = []
            let devices = try Self.chunked(serialNumbers).flatMap { chunk in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT d.id, d.library_identifier FROM registrations r JOIN devices d ON d.id = r.device_id
                        WHERE r.pass_type_identifier = ? AND r.serial_number IN (\(Self.placeholders(chunk.count)))
                        """, arguments: StatementArguments([passTypeIdentifier] + chunk))
            }
            var seen = Set<Int64>()
            for row in devices where seen.insert(row["id"]).inserted {
                result.append(
                    try Self.index(
                        db, deviceID: row["id"], device: row["library_identifier"],
                        passTypeIdentifier: passTypeIdentifier))
            }
            return result.sorted { $0.device < $1.device }
        }
    }

    package func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await pool.read { db in
            var tokens = Set<String>()
            for chunk in Self.chunked(serialNumbers) {
                let found = try String.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT d.push_token FROM registrations r JOIN devices d ON d.id = r.device_id
                        WHERE r.pass_type_identifier = ? AND r.serial_number IN (\(Self.placeholders(chunk.count)))
                        """, arguments: StatementArguments([passTypeIdentifier] + chunk))
                tokens.formUnion(found)
            }
            return tokens.sorted()
        }
    }

    package func exportRegistrations(after: ExportedRegistration?, limit: Int) async throws -> [ExportedRegistration] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.library_identifier, d.push_token, r.pass_type_identifier, r.serial_number
                    FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE (d.library_identifier, r.pass_type_identifier, r.serial_number) > (?, ?, ?)
                    ORDER BY d.library_identifier, r.pass_type_identifier, r.serial_number LIMIT ?
                    """,
                arguments: [
                    after?.device ?? "", after?.passTypeIdentifier ?? "", after?.serialNumber ?? "", max(0, limit),
                ]
            )
            .map {
                ExportedRegistration(device: $0[0], pushToken: $0[1], passTypeIdentifier: $0[2], serialNumber: $0[3])
            }
        }
    }

    package func recentLogs(limit: Int) async throws -> [LogEntry] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT received_at, message FROM device_logs ORDER BY id DESC LIMIT ?",
                arguments: [max(0, limit)]
            )
            .map { LogEntry(receivedAt: $0["received_at"], message: $0["message"]) }
        }
    }

    package func statistics() async throws -> RegistrationStatistics {
        try await pool.read { db in
            RegistrationStatistics(
                devices: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM devices") ?? 0,
                registrations: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM registrations") ?? 0,
                logEntries: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device_logs") ?? 0)
        }
    }

    package func pushQueueStatistics() async throws -> PushQueueStatistics {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MIN(queued_at) FROM push_queue")
            return PushQueueStatistics(pending: row?[0] ?? 0, oldestQueuedAt: row?[1])
        }
    }

    /// The value of a PRAGMA on the writer connection (tests check `synchronous` and `journal_mode`).
    package func writerPragma(_ name: String) throws -> String? {
        precondition(name.allSatisfy { $0.isLetter || $0 == "_" })
        return try pool.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA \(name)") }
    }

    // MARK: Helpers

    private static func index(_ db: Database, deviceID: Int64, device: String, passTypeIdentifier: String) throws
        -> DeviceIndex
    {
        DeviceIndex(
            device: device, passTypeIdentifier: passTypeIdentifier,
            serialNumbers: try String.fetchAll(
                db,
                sql: """
                    SELECT serial_number FROM registrations WHERE device_id = ? AND pass_type_identifier = ? ORDER BY serial_number
                    """, arguments: [deviceID, passTypeIdentifier]))
    }

    private static func nextRevision(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "UPDATE store_revision SET value = value + 1 WHERE id = 1 RETURNING value") ?? 0
    }

    /// SQLite limits the number of variables in one statement.
    private static func chunked(_ values: [String], size: Int = 500) -> [[String]] {
        stride(from: 0, to: values.count, by: size).map { Array(values[$0..<min($0 + size, values.count)]) }
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
