import Foundation
import Logging
import PostgresNIO
import RegistrationStore

/// The registration store on a PostgreSQL server (postgres-nio's
/// `PostgresClient`, a connection pool), for several `passforge serve`
/// processes on several machines sharing one database.
///
/// The rules are those of `RegistrationStore`, kept by the database itself:
/// - Unique constraints make concurrent duplicates one row
///   (`INSERT … ON CONFLICT DO NOTHING`), and `ON DELETE CASCADE` removes a
///   device's registrations with it.
/// - Every change of a device first takes a transaction-level advisory lock
///   on that device's library identifier, then draws its revision from a
///   sequence: changes of one device (so of one index) are serialized and
///   their revisions follow their commit order, while different devices never
///   wait for each other (no single hot row). The lock also covers a device
///   that does not exist yet, which a row lock cannot.
/// - The returned index is read in the transaction that made the change.
/// - The push lock is a session-level advisory lock held on one connection
///   for the push run, so two push runs on any machines never overlap.
/// - Migrations run at `connect` inside a transaction holding an advisory
///   lock, so servers starting together migrate once.
///
/// Lifecycle: `connect` checks the server with one connection of its own (so
/// its errors say exactly what is wrong), migrates, starts the pool's `run()`
/// in a task and runs a first query; `shutdown()` stops the pool (dropping
/// the store without it stops the pool too).
///
/// When the server goes away, requests on a broken connection fail with
/// `PostgresStoreError` (`isUnavailable`), and requests waiting for a
/// connection fail within about `reachabilityCheckInterval` once a probe
/// finds the server unreachable; the pool reconnects by itself when the
/// server is back.
package final class PostgresRegistrationStore: RegistrationDatabase {
    package struct Options: Sendable {
        /// Device log messages kept; older ones are dropped.
        package var logLimit = PostgresRegistrationStore.defaultLogLimit
        /// The pool's size: at most this many connections to the server.
        package var maximumConnections = 10
        /// For each TCP connect and for each login (`connect_timeout` in the URL overrides it).
        package var connectTimeout: Duration = .seconds(5)
        /// How long a request may wait for a free connection while the server is reachable.
        package var requestTimeout: Duration = .seconds(30)
        /// How soon a request waiting for a connection checks that the server
        /// is reachable; when it is not, the request fails then.
        package var reachabilityCheckInterval: Duration = .seconds(1)
        /// Where the pool logs its background events; nil: nowhere.
        package var backgroundLogger: Logger?

        package init(logLimit: Int = PostgresRegistrationStore.defaultLogLimit) {
            self.logLimit = logLimit
        }
    }

    package let location: PostgresLocation
    private let options: Options
    private let logLimit: Int
    private let connector: PostgresConnector
    private let slot: PoolSlot
    private let reachability: Reachability
    static let logger = PostgresConnector.silent

    // MARK: Lifecycle

    /// Connects to the server of a `postgres://` URL (PASSFORGE_DATABASE_URL) and migrates its database.
    /// Several `passforge serve` instances share one database.
    package var isShared: Bool { true }

    package static func connect(url: String, options: Options = Options()) async throws -> PostgresRegistrationStore {
        try await connect(location: PostgresLocation(url: url), options: options)
    }

    package static func connect(location: PostgresLocation, options: Options = Options()) async throws -> PostgresRegistrationStore {
        let connector = try PostgresConnector(location: location, options: options)
        // One connection of our own first: it says precisely why a server
        // cannot be used (the pool would only retry), and it migrates.
        let connection = try await connector.openConnection()
        do {
            try await migrate(connection, location: location)
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw PostgresStoreError.translate(error, at: location) ?? error
        }
        let store = PostgresRegistrationStore(location: location, options: options, connector: connector)
        do {
            try await store.leased { connection in
                try await connection.perform("SELECT 1")
            }
        } catch {
            await store.shutdown()
            throw error
        }
        return store
    }

    private init(location: PostgresLocation, options: Options, connector: PostgresConnector) {
        self.location = location
        self.options = options
        self.logLimit = max(1, options.logLimit)
        self.connector = connector
        self.reachability = Reachability(connector: connector)
        let logger = options.backgroundLogger
        self.slot = PoolSlot {
            if let logger { return PostgresClient(configuration: connector.clientConfiguration(), backgroundLogger: logger) }
            return PostgresClient(configuration: connector.clientConfiguration())
        }
    }

    /// Closes the pool's connections; later requests fail with a `.shutDown` error.
    package func shutdown() async {
        await slot.close()?.value
    }

    deinit {
        _ = slot.close()
    }

    // MARK: Schema

    /// Version name, statements. The names match the SQLite store's migrations.
    static let migrations: [(String, [String])] = [
        ("v1: devices, registrations, logs", [
            // COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
            """
            CREATE TABLE devices (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                library_identifier TEXT COLLATE "C" NOT NULL UNIQUE,
                push_token TEXT COLLATE "C" NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                -- The revision of the device's last change: what a read-only answer reports.
                revision BIGINT NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX devices_by_push_token ON devices (push_token)",
            """
            CREATE TABLE registrations (
                device_id BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
                pass_type_identifier TEXT COLLATE "C" NOT NULL,
                serial_number TEXT COLLATE "C" NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (device_id, pass_type_identifier, serial_number)
            )
            """,
            "CREATE INDEX registrations_by_pass ON registrations (pass_type_identifier, serial_number)",
            """
            CREATE TABLE device_logs (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                received_at DOUBLE PRECISION NOT NULL,
                message TEXT NOT NULL
            )
            """,
            // Revisions: a sequence, drawn under the device's lock, so no row is contended.
            "CREATE SEQUENCE store_revision AS BIGINT",
        ]),
        ("v2: push queue", [
            """
            CREATE TABLE push_queue (
                push_token TEXT COLLATE "C" NOT NULL,
                pass_type_identifier TEXT COLLATE "C" NOT NULL,
                queued_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (push_token, pass_type_identifier)
            )
            """,
            "CREATE INDEX push_queue_by_age ON push_queue (queued_at)",
            """
            CREATE TABLE push_cursor (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                update_tag BIGINT NOT NULL
            )
            """,
        ]),
        // A registration in one round trip instead of eight (BEGIN, lock, read, two
        // inserts, the index, COMMIT): the same steps, run by the server. Called
        // outside BEGIN, each call is its own transaction, so the device's
        // advisory lock is held until it commits; in a function every statement
        // takes a fresh snapshot, so the steps after the lock see what the
        // previous holder committed.
        ("v3: register and unregister in one call", [
            """
            CREATE FUNCTION passforge_register(p_device text, p_token text, p_type text, p_serial text, p_now float8)
            RETURNS TABLE (change_outcome text, change_revision bigint, change_serials text[])
            LANGUAGE plpgsql AS $$
            DECLARE
                v_id bigint;
                v_token text;
                v_revision bigint;
            BEGIN
                -- Registered again with the same token (a restore, a reinstall): a read, no lock, no write.
                SELECT d.id, d.revision INTO v_id, v_revision FROM devices d
                WHERE d.library_identifier = p_device AND d.push_token = p_token
                  AND EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = d.id
                              AND r.pass_type_identifier = p_type AND r.serial_number = p_serial);
                IF FOUND THEN
                    change_outcome := 'unchanged';
                ELSE
                    PERFORM pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(p_device));
                    SELECT d.id, d.push_token, d.revision INTO v_id, v_token, v_revision FROM devices d
                    WHERE d.library_identifier = p_device;
                    IF FOUND THEN
                        INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
                        VALUES (v_id, p_type, p_serial, p_now) ON CONFLICT DO NOTHING;
                        IF FOUND THEN
                            change_outcome := 'created';
                        ELSIF v_token <> p_token THEN
                            change_outcome := 'pushTokenReplaced';
                        ELSE
                            -- A concurrent twin registered it first: the index is the one of its revision.
                            change_outcome := 'unchanged';
                        END IF;
                        IF change_outcome <> 'unchanged' THEN
                            UPDATE devices d SET revision = nextval('store_revision'),
                                updated_at = CASE WHEN d.push_token = p_token THEN d.updated_at ELSE p_now END,
                                push_token = p_token
                            WHERE d.id = v_id RETURNING d.revision INTO v_revision;
                        END IF;
                    ELSE
                        INSERT INTO devices (library_identifier, push_token, created_at, updated_at, revision)
                        VALUES (p_device, p_token, p_now, p_now, nextval('store_revision'))
                        RETURNING devices.id, devices.revision INTO v_id, v_revision;
                        INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
                        VALUES (v_id, p_type, p_serial, p_now);
                        change_outcome := 'created';
                    END IF;
                END IF;
                change_revision := v_revision;
                change_serials := ARRAY(SELECT r.serial_number FROM registrations r
                                        WHERE r.device_id = v_id AND r.pass_type_identifier = p_type ORDER BY r.serial_number);
                RETURN NEXT;
            END
            $$
            """,
            """
            CREATE FUNCTION passforge_unregister(p_device text, p_type text, p_serial text)
            RETURNS TABLE (change_outcome text, change_revision bigint, change_serials text[])
            LANGUAGE plpgsql AS $$
            DECLARE
                v_id bigint;
            BEGIN
                PERFORM pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(p_device));
                change_outcome := 'notRegistered';
                change_serials := '{}';
                SELECT d.id INTO v_id FROM devices d WHERE d.library_identifier = p_device;
                IF FOUND THEN
                    DELETE FROM registrations r
                    WHERE r.device_id = v_id AND r.pass_type_identifier = p_type AND r.serial_number = p_serial;
                    IF FOUND THEN change_outcome := 'removed'; END IF;
                    -- Apple: delete the device entry when it has no more registrations.
                    DELETE FROM devices d WHERE d.id = v_id AND NOT EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = v_id);
                    change_revision := nextval('store_revision');
                    UPDATE devices d SET revision = change_revision WHERE d.id = v_id;
                    change_serials := ARRAY(SELECT r.serial_number FROM registrations r
                                            WHERE r.device_id = v_id AND r.pass_type_identifier = p_type ORDER BY r.serial_number);
                ELSE
                    change_revision := nextval('store_revision');
                END IF;
                RETURN NEXT;
            END
            $$
            """,
        ]),
        offerMigration,
    ]

    /// Advisory lock keys. Single bigint keys and pairs of integers are separate key spaces.
    enum LockKey {
        static let migrations: Int64 = 0x7066_6f72_6765_0001 // "pforge" 1
        static let push: Int64 = 0x7066_6f72_6765_0002
        /// Pairs (this, hash of offer/claim identifier): one claim identifier claims at a time.
        static let offerClaim: Int32 = 0x7066_0002
        /// First key of a device's lock; the second is hashtext(library identifier).
        static let deviceClass: Int32 = 0x7066_0001
    }

    /// Applies the missing migrations in one transaction, holding an advisory
    /// lock: a second server starting at the same moment waits, then finds
    /// them applied.
    static func migrate(_ connection: PostgresConnection, location: PostgresLocation) async throws {
        try await inTransaction(connection) { connection in
            try await connection.perform("SELECT pg_advisory_xact_lock(\(LockKey.migrations))")
            try await connection.perform("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version TEXT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """)
            let applied = Set(try await collect(connection.checkedQuery("SELECT version FROM schema_migrations", logger: logger), as: String.self))
            for (version, statements) in migrations where !applied.contains(version) {
                for statement in statements {
                    try await connection.perform(PostgresQuery(unsafeSQL: statement))
                }
                try await connection.perform("INSERT INTO schema_migrations (version) VALUES (\(version))")
            }
        }
    }

    /// The applied migrations, oldest first (tests).
    package func appliedMigrations() async throws -> [String] {
        try await leased { connection in
            try await Self.collect(connection.checkedQuery("SELECT version FROM schema_migrations ORDER BY applied_at, version", logger: Self.logger), as: String.self)
        }
    }

    // MARK: Changes

    package func register(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) async throws -> RegistrationChange {
        let now = Date().timeIntervalSince1970
        return try await change(device: device, passTypeIdentifier: passTypeIdentifier, """
            SELECT change_outcome, change_revision, change_serials
            FROM passforge_register(\(device), \(pushToken), \(passTypeIdentifier), \(serialNumber), \(now)::float8)
            """)
    }

    package func unregister(device: String, passTypeIdentifier: String, serialNumber: String) async throws -> RegistrationChange {
        try await change(device: device, passTypeIdentifier: passTypeIdentifier, """
            SELECT change_outcome, change_revision, change_serials
            FROM passforge_unregister(\(device), \(passTypeIdentifier), \(serialNumber))
            """)
    }

    /// One call of a change function (migration v3): one round trip, its own
    /// transaction; again (a few times) after a deadlock or a serialization failure.
    private func change(device: String, passTypeIdentifier: String, _ query: PostgresQuery) async throws -> RegistrationChange {
        try await leased { connection in
            var attempt = 1
            while true {
                do {
                    guard let (outcome, revision, serials) = try await Self.first(
                        connection.checkedQuery(query, logger: Self.logger), as: (String, Int64, [String]).self),
                        let known = RegistrationOutcome(storedName: outcome) else {
                        throw PostgresStoreError(kind: .server, description: "PostgreSQL at \(self.location.server) gave no answer to a registration change")
                    }
                    return RegistrationChange(outcome: known,
                                              index: DeviceIndex(device: device, passTypeIdentifier: passTypeIdentifier, serialNumbers: serials),
                                              revision: revision)
                } catch let error as PSQLError where attempt < 5 && ["40001", "40P01"].contains(error.serverInfo?[.sqlState]) {
                    attempt += 1
                }
            }
        }
    }

    package func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange] {
        try await transaction { connection in
            // `updated_at` is when the device last set its push token.
            let candidates = try await Self.collect(connection.checkedQuery("""
                SELECT library_identifier FROM devices
                WHERE push_token = \(pushToken) AND (\(invalidSince)::float8 IS NULL OR updated_at < \(invalidSince)::float8)
                """, logger: Self.logger), as: String.self)
            guard !candidates.isEmpty else { return [] }
            try await Self.lockDevices(candidates, connection)
            // Under the locks, again: a device may have changed its token meanwhile.
            let rows = try await Self.collect(connection.checkedQuery("""
                SELECT DISTINCT d.library_identifier, r.pass_type_identifier
                FROM devices d JOIN registrations r ON r.device_id = d.id
                WHERE d.library_identifier = ANY(\(candidates)) AND d.push_token = \(pushToken)
                  AND (\(invalidSince)::float8 IS NULL OR d.updated_at < \(invalidSince)::float8)
                ORDER BY 1, 2
                """, logger: Self.logger), as: (String, String).self)
            try await connection.perform("""
                DELETE FROM devices
                WHERE library_identifier = ANY(\(candidates)) AND push_token = \(pushToken)
                  AND (\(invalidSince)::float8 IS NULL OR updated_at < \(invalidSince)::float8)
                """)
            let revision = try await Self.nextRevision(connection)
            return rows.map { device, type in
                RegistrationChange(outcome: .removed,
                                   index: DeviceIndex(device: device, passTypeIdentifier: type, serialNumbers: []),
                                   revision: revision)
            }
        }
    }

    // MARK: Push queue

    package func pushCursor() async throws -> Int64? {
        try await leased { connection in
            try await Self.first(connection.checkedQuery("SELECT update_tag FROM push_cursor WHERE id = 1", logger: Self.logger), as: Int64.self)
        }
    }

    package func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int {
        let serialsByType = Dictionary(grouping: passes, by: \.passTypeIdentifier).mapValues { $0.map(\.serialNumber) }
            .sorted { $0.key < $1.key }
        return try await transaction { connection in
            let now = Date().timeIntervalSince1970
            for (type, serials) in serialsByType {
                try await connection.perform("""
                    INSERT INTO push_queue (push_token, pass_type_identifier, queued_at)
                    SELECT DISTINCT d.push_token, r.pass_type_identifier, \(now)::float8
                    FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE r.pass_type_identifier = \(type) AND r.serial_number = ANY(\(serials))
                    ON CONFLICT DO NOTHING
                    """)
            }
            // The cursor only moves forward.
            try await connection.perform("""
                INSERT INTO push_cursor (id, update_tag) VALUES (1, \(cursor))
                ON CONFLICT (id) DO UPDATE SET update_tag = GREATEST(push_cursor.update_tag, EXCLUDED.update_tag)
                """)
            return try await Self.first(connection.checkedQuery("SELECT COUNT(*) FROM push_queue", logger: Self.logger), as: Int.self) ?? 0
        }
    }

    package func pendingPushes(limit: Int) async throws -> [PendingPush] {
        try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT push_token, pass_type_identifier, queued_at FROM push_queue
                ORDER BY queued_at, push_token, pass_type_identifier LIMIT \(max(0, limit))
                """, logger: Self.logger), as: (String, String, Double).self)
                .map { PendingPush(pushToken: $0.0, passTypeIdentifier: $0.1, queuedAt: $0.2) }
        }
    }

    package func completePushes(_ pushes: [PendingPush]) async throws {
        guard !pushes.isEmpty else { return }
        try await transaction { connection in
            try await connection.perform("""
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
                let acquired = try await Self.first(connection.checkedQuery(
                    "SELECT pg_try_advisory_lock(\(LockKey.push))", logger: Self.logger), as: Bool.self) ?? false
                guard acquired else { throw PushLockBusy() }
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

    package func appendLog(_ messages: [String], receivedAt: Double) async throws {
        guard !messages.isEmpty else { return }
        let limit = logLimit
        try await transaction { connection in
            try await connection.perform("""
                INSERT INTO device_logs (received_at, message)
                SELECT \(receivedAt)::float8, message FROM unnest(\(messages)::text[]) WITH ORDINALITY AS m(message, position)
                ORDER BY position
                """)
            // Ids only grow, so this keeps about the newest `limit` (exactly, without concurrent appends).
            try await connection.perform("""
                DELETE FROM device_logs WHERE id <= (SELECT MAX(id) FROM device_logs) - \(Int64(limit))
                """)
        }
    }

    // MARK: Reads

    package func serialNumbers(device: String, passTypeIdentifier: String) async throws -> [String] {
        try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                WHERE d.library_identifier = \(device) AND r.pass_type_identifier = \(passTypeIdentifier) ORDER BY r.serial_number
                """, logger: Self.logger), as: String.self)
        }
    }

    package func index(device: String, passTypeIdentifier: String) async throws -> DeviceIndex {
        DeviceIndex(device: device, passTypeIdentifier: passTypeIdentifier,
                    serialNumbers: try await serialNumbers(device: device, passTypeIdentifier: passTypeIdentifier))
    }

    /// One round trip for a whole batch of the shared index writer.
    package func indices(of keys: [(device: String, passTypeIdentifier: String)]) async throws -> [DeviceIndex] {
        guard !keys.isEmpty else { return [] }
        let devices = keys.map(\.device), types = keys.map(\.passTypeIdentifier)
        return try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT k.device, k.type,
                       ARRAY(SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                             WHERE d.library_identifier = k.device AND r.pass_type_identifier = k.type ORDER BY r.serial_number)
                FROM unnest(\(devices)::text[], \(types)::text[]) WITH ORDINALITY AS k(device, type, position)
                ORDER BY k.position
                """, logger: Self.logger), as: (String, String, [String]).self)
                .map { DeviceIndex(device: $0.0, passTypeIdentifier: $0.1, serialNumbers: $0.2) }
        }
    }

    package func indices(holding passTypeIdentifier: String, serialNumbers: [String]) async throws -> [DeviceIndex] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT d.library_identifier,
                       ARRAY(SELECT serial_number FROM registrations
                             WHERE device_id = d.id AND pass_type_identifier = \(passTypeIdentifier) ORDER BY serial_number)
                FROM devices d
                WHERE EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = d.id
                              AND r.pass_type_identifier = \(passTypeIdentifier) AND r.serial_number = ANY(\(serialNumbers)))
                ORDER BY d.library_identifier
                """, logger: Self.logger), as: (String, [String]).self)
                .map { DeviceIndex(device: $0.0, passTypeIdentifier: passTypeIdentifier, serialNumbers: $0.1) }
        }
    }

    package func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT DISTINCT d.push_token FROM registrations r JOIN devices d ON d.id = r.device_id
                WHERE r.pass_type_identifier = \(passTypeIdentifier) AND r.serial_number = ANY(\(serialNumbers))
                ORDER BY d.push_token
                """, logger: Self.logger), as: String.self)
        }
    }

    package func recentLogs(limit: Int) async throws -> [LogEntry] {
        try await leased { connection in
            try await Self.collect(connection.checkedQuery(
                "SELECT received_at, message FROM device_logs ORDER BY id DESC LIMIT \(max(0, limit))", logger: Self.logger),
                as: (Double, String).self)
                .map { LogEntry(receivedAt: $0.0, message: $0.1) }
        }
    }

    package func exportRegistrations(after: ExportedRegistration?, limit: Int) async throws -> [ExportedRegistration] {
        let device = after?.device ?? "", type = after?.passTypeIdentifier ?? "", serial = after?.serialNumber ?? ""
        let limit = max(0, limit)
        return try await leased { connection in
            try await Self.collect(connection.checkedQuery("""
                SELECT d.library_identifier, d.push_token, r.pass_type_identifier, r.serial_number
                FROM registrations r JOIN devices d ON d.id = r.device_id
                WHERE (d.library_identifier, r.pass_type_identifier, r.serial_number) > (\(device), \(type), \(serial))
                ORDER BY d.library_identifier, r.pass_type_identifier, r.serial_number LIMIT \(limit)
                """, logger: Self.logger), as: (String, String, String, String).self)
                .map { ExportedRegistration(device: $0.0, pushToken: $0.1, passTypeIdentifier: $0.2, serialNumber: $0.3) }
        }
    }

    package func statistics() async throws -> RegistrationStatistics {
        try await leased { connection in
            let counts = try await Self.first(connection.checkedQuery("""
                SELECT (SELECT COUNT(*) FROM devices), (SELECT COUNT(*) FROM registrations), (SELECT COUNT(*) FROM device_logs)
                """, logger: Self.logger), as: (Int, Int, Int).self) ?? (0, 0, 0)
            return RegistrationStatistics(devices: counts.0, registrations: counts.1, logEntries: counts.2)
        }
    }

    package func pushQueueStatistics() async throws -> PushQueueStatistics {
        try await leased { connection in
            let row = try await Self.first(connection.checkedQuery(
                "SELECT COUNT(*)::bigint, MIN(queued_at) FROM push_queue", logger: Self.logger), as: (Int, Double?).self)
            return PushQueueStatistics(pending: row?.0 ?? 0, oldestQueuedAt: row?.1 ?? nil)
        }
    }

    // MARK: Helpers

    /// Serializes the changes of these devices (sorted by lock key, so that
    /// two transactions locking several devices cannot deadlock). Works for a
    /// device without a row yet.
    private static func lockDevices(_ devices: [String], _ connection: PostgresConnection) async throws {
        if devices.count == 1 {
            try await connection.perform("SELECT pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(\(devices[0])))")
            return
        }
        let keys = try await collect(connection.checkedQuery(
            "SELECT DISTINCT hashtext(device) AS key FROM unnest(\(devices)::text[]) AS device ORDER BY key", logger: logger),
            as: Int32.self)
        for key in keys {
            try await connection.perform("SELECT pg_advisory_xact_lock(\(LockKey.deviceClass), \(key))")
        }
    }

    static func nextRevision(_ connection: PostgresConnection) async throws -> Int64 {
        try await first(connection.checkedQuery("SELECT nextval('store_revision')", logger: logger), as: Int64.self) ?? 0
    }

    private static func index(_ connection: PostgresConnection, deviceID: Int64, device: String, passTypeIdentifier: String) async throws -> DeviceIndex {
        DeviceIndex(device: device, passTypeIdentifier: passTypeIdentifier,
                    serialNumbers: try await collect(connection.checkedQuery("""
                        SELECT serial_number FROM registrations
                        WHERE device_id = \(deviceID) AND pass_type_identifier = \(passTypeIdentifier) ORDER BY serial_number
                        """, logger: logger), as: String.self))
    }

    static func collect<each Column: PostgresDecodable & Sendable>(
        _ rows: PostgresRowSequence, as type: (repeat each Column).Type
    ) async throws -> [(repeat each Column)] {
        var result: [(repeat each Column)] = []
        for try await row in rows { result.append(try row.decode(type)) }
        return result
    }

    static func collect<Column: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: Column.Type) async throws -> [Column] {
        var result: [Column] = []
        for try await row in rows { result.append(try row.decode(Column.self)) }
        return result
    }

    static func first<each Column: PostgresDecodable & Sendable>(
        _ rows: PostgresRowSequence, as type: (repeat each Column).Type
    ) async throws -> (repeat each Column)? {
        var found: (repeat each Column)?
        for try await row in rows where found == nil { found = try row.decode(type) }
        return found
    }

    static func first<Column: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: Column.Type) async throws -> Column? {
        var found: Column?
        for try await row in rows where found == nil { found = try row.decode(Column.self) }
        return found
    }

    /// Runs `body` in a transaction on a pooled connection.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await leased { connection in try await Self.inTransaction(connection, body) }
    }

    /// BEGIN, `body`, COMMIT; ROLLBACK when `body` fails; again (a few times)
    /// after a deadlock or a serialization failure.
    static func inTransaction<T>(_ connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            try await connection.perform("BEGIN")
            do {
                let value = try await body(connection)
                try await connection.perform("COMMIT")
                return value
            } catch {
                if connection.isClosed || Self.brokeTheConnection(error) {
                    // Nothing to roll back: the server ended the session (and the transaction).
                    try? await connection.close()
                    throw error
                }
                do {
                    try await connection.perform("ROLLBACK")
                } catch {
                    // The connection is broken or confused: never hand it back mid-transaction.
                    try? await connection.close()
                }
                if attempt < 5, let psql = error as? PSQLError, ["40001", "40P01"].contains(psql.serverInfo?[.sqlState]) {
                    attempt += 1
                    continue
                }
                throw error
            }
        }
    }

    /// Whether `error` ended the connection's session.
    static func brokeTheConnection(_ error: any Error) -> Bool {
        if error is ConnectionClosed { return true }
        guard let psql = error as? PSQLError else { return false }
        switch psql.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .connectionError: return true
        case .server: return psql.serverInfo?[.severity] == "FATAL" || psql.serverInfo?[.severity] == "PANIC"
        default: return false
        }
    }

    /// Runs `body` on a pooled connection, translating postgres-nio's errors.
    /// While it waits for a connection, a watchdog checks every
    /// `reachabilityCheckInterval` that the server is reachable, and fails the
    /// request when it is not (the pool alone would keep it waiting while it
    /// retries), or when `requestTimeout` passed.
    func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let (client, generation) = slot.current
        let leased = LeaseFlag()
        let reachability = self.reachability
        let options = self.options
        let location = self.location
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.set()
                        return try await body(connection)
                    }
                }
                group.addTask {
                    let deadline = ContinuousClock.now + options.requestTimeout
                    while true {
                        try await Task.sleep(for: options.reachabilityCheckInterval)
                        if leased.isSet { return nil }
                        if let failure = await reachability.check() { throw failure }
                        if leased.isSet { return nil }
                        if ContinuousClock.now >= deadline {
                            throw PostgresStoreError(kind: .timedOut,
                                                     description: "no connection to PostgreSQL at \(location.server) became free within \(options.requestTimeout.components.seconds) s; the server is reachable but busy")
                        }
                    }
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let value = next { return value }
                }
                throw CancellationError()
            }
        } catch {
            if Task.isCancelled { throw error }
            if let translated = PostgresStoreError.translate(error, at: location) { throw translated }
            if slot.isClosed {
                throw PostgresStoreError(kind: .shutDown, description: "the PostgreSQL registration store (\(location)) was shut down")
            }
            if !leased.isSet, !(error is PushLockBusy) {
                // The pool refused to lease (it gave up reconnecting, or was closed).
                if let failure = await reachability.check() { throw failure }
                slot.renew(replacing: generation)
                throw PostgresStoreError(kind: .unavailable,
                                         description: "PostgreSQL at \(location.server) is reachable again; the store is reconnecting, try again")
            }
            throw error
        }
    }
}

/// The connection closed under a request (the server went away).
struct ConnectionClosed: Error {}

extension PostgresConnection {
    /// `query`, refusing a connection that is closed already: postgres-nio
    /// 1.33 never answers a query written to a closed channel (its fix,
    /// vapor/postgres-nio#487, was reverted in #501), which would hang the
    /// request instead of failing it.
    func checkedQuery(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        if isClosed { throw ConnectionClosed() }
        return try await self.query(query, logger: logger)
    }

    /// Runs a statement and reads its whole answer, so that an error raised
    /// while it runs (a deadlock, a dropped connection) is thrown here, not lost
    /// with an unread row stream.
    func perform(_ query: PostgresQuery) async throws {
        for try await _ in try await checkedQuery(query, logger: PostgresConnector.silent) {}
    }
}

extension RegistrationOutcome {
    /// The names the change functions return.
    init?(storedName: String) {
        switch storedName {
        case "created": self = .created
        case "pushTokenReplaced": self = .pushTokenReplaced
        case "unchanged": self = .unchanged
        case "removed": self = .removed
        case "notRegistered": self = .notRegistered
        default: return nil
        }
    }
}
