import Foundation
package import Logging
import PostgresNIO
package import RegistrationStore

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
/// server is back. A request whose connection stops answering (a network
/// partition: no reset, no close) fails after `queryTimeout`, its connection
/// closed.
///
/// Failover: with several hosts in the URL, the store uses the first whose
/// session fits `target_session_attrs` (`ServerSelection`). When a request
/// finds that server gone or read-only, it fails (503 for a device), and the
/// store looks for the server that fits now, every `failoverSearchInterval`,
/// and moves its pool there (`Failover`).
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
        /// How long a request may use its connection (all its queries): past it, the
        /// connection is closed and the request fails. A network partition leaves a
        /// connection that neither answers nor closes; this bounds the wait.
        package var queryTimeout: Duration = .seconds(10)
        /// During a failover, how often the store looks for the server to use.
        package var failoverSearchInterval: Duration = .milliseconds(250)
        /// Where the pool logs its background events; nil: nowhere.
        package var backgroundLogger: Logger?

        package init(logLimit: Int = PostgresRegistrationStore.defaultLogLimit) {
            self.logLimit = logLimit
        }
    }

    package let location: PostgresLocation
    let options: Options
    let logLimit: Int
    let connector: PostgresConnector
    let slot: PoolSlot
    let reachability = Reachability()
    let failover: Failover
    static let logger = PostgresConnector.silent

    // MARK: Lifecycle

    /// Connects to the server of a `postgres://` URL (PASSFORGE_DATABASE_URL) and migrates its database.
    /// Several `passforge serve` instances share one database.
    package var isShared: Bool { true }

    package static func connect(url: String, options: Options = Options()) async throws -> PostgresRegistrationStore {
        try await connect(location: PostgresLocation(url: url), options: options)
    }

    package static func connect(location: PostgresLocation, options: Options = Options()) async throws
        -> PostgresRegistrationStore
    {
        let connector = try PostgresConnector(location: location, options: options)
        // With several servers, the one that fits target_session_attrs.
        let endpoint = try await connector.findServer().get()
        let chosen = connector.connecting(to: endpoint)
        // One connection of our own first: it says precisely why a server
        // cannot be used (the pool would only retry), and it migrates.
        let connection = try await chosen.openConnection()
        do {
            try await migrate(connection, location: chosen.location)
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw PostgresStoreError.translate(error, at: chosen.location) ?? error
        }
        let store = PostgresRegistrationStore(
            location: location, options: options, connector: connector, endpoint: endpoint)
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

    private init(
        location: PostgresLocation, options: Options, connector: PostgresConnector, endpoint: PostgresLocation.Endpoint
    ) {
        self.location = location
        self.options = options
        self.logLimit = max(1, options.logLimit)
        self.connector = connector
        let logger = options.backgroundLogger
        let slot = PoolSlot(endpoint: endpoint) { endpoint in
            let configuration = connector.connecting(to: endpoint).clientConfiguration()
            if let logger { return PostgresClient(configuration: configuration, backgroundLogger: logger) }
            return PostgresClient(configuration: configuration)
        }
        self.slot = slot
        self.failover = Failover(
            selection: ServerSelection(connector: connector), location: location, slot: slot,
            interval: options.failoverSearchInterval, logger: logger)
    }

    /// Closes the pool's connections; later requests fail with a `.shutDown` error.
    package func shutdown() async {
        await slot.close()?.value
    }

    deinit {
        _ = slot.close()
    }

    // MARK: Changes

    package func register(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String)
        async throws -> RegistrationChange
    {
        let now = Date().timeIntervalSince1970
        return try await change(
            device: device, passTypeIdentifier: passTypeIdentifier,
            """
            SELECT change_outcome, change_revision, change_serials
            FROM passforge_register(\(device), \(pushToken), \(passTypeIdentifier), \(serialNumber), \(now)::float8)
            """)
    }

    package func unregister(device: String, passTypeIdentifier: String, serialNumber: String) async throws
        -> RegistrationChange
    {
        try await change(
            device: device, passTypeIdentifier: passTypeIdentifier,
            """
            SELECT change_outcome, change_revision, change_serials
            FROM passforge_unregister(\(device), \(passTypeIdentifier), \(serialNumber))
            """)
    }

    /// One call of a change function (migration v3) in its own transaction: BEGIN, the call, COMMIT,
    /// so that it returns only once the change is committed (see `transaction`); again (a few times)
    /// after a deadlock or a serialization failure.
    private func change(device: String, passTypeIdentifier: String, _ query: PostgresQuery) async throws
        -> RegistrationChange
    {
        try await transaction { connection in
            guard
                let (outcome, revision, serials) = try await Self.first(
                    connection.checkedQuery(query, logger: Self.logger), as: (String, Int64, [String]).self),
                let known = RegistrationOutcome(storedName: outcome)
            else {
                throw PostgresStoreError(
                    kind: .server,
                    description: "PostgreSQL at \(self.location.server) gave no answer to a registration change")
            }
            return RegistrationChange(
                outcome: known,
                index: DeviceIndex(device: device, passTypeIdentifier: passTypeIdentifier, serialNumbers: serials),
                revision: revision)
        }
    }

    package func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange] {
        try await transaction { connection in
            // `updated_at` is when the device last set its push token.
            let candidates = try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT library_identifier FROM devices
                    WHERE push_token = \(pushToken) AND (\(invalidSince)::float8 IS NULL OR updated_at < \(invalidSince)::float8)
                    """, logger: Self.logger), as: String.self)
            guard !candidates.isEmpty else { return [] }
            try await Self.lockDevices(candidates, connection)
            // Under the locks, again: a device may have changed its token meanwhile.
            let rows = try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT DISTINCT d.library_identifier, r.pass_type_identifier
                    FROM devices d JOIN registrations r ON r.device_id = d.id
                    WHERE d.library_identifier = ANY(\(candidates)) AND d.push_token = \(pushToken)
                      AND (\(invalidSince)::float8 IS NULL OR d.updated_at < \(invalidSince)::float8)
                    ORDER BY 1, 2
                    """, logger: Self.logger), as: (String, String).self)
            try await connection.perform(
                """
                DELETE FROM devices
                WHERE library_identifier = ANY(\(candidates)) AND push_token = \(pushToken)
                  AND (\(invalidSince)::float8 IS NULL OR updated_at < \(invalidSince)::float8)
                """)
            let revision = try await Self.nextRevision(connection)
            return rows.map { device, type in
                RegistrationChange(
                    outcome: .removed,
                    index: DeviceIndex(device: device, passTypeIdentifier: type, serialNumbers: []),
                    revision: revision)
            }
        }
    }

    package func appendLog(_ messages: [String], receivedAt: Double) async throws {
        guard !messages.isEmpty else { return }
        let limit = logLimit
        try await transaction { connection in
            try await connection.perform(
                """
                INSERT INTO device_logs (received_at, message)
                SELECT \(receivedAt)::float8, message FROM unnest(\(messages)::text[]) WITH ORDINALITY AS m(message, position)
                ORDER BY position
                """)
            // Ids only grow, so this keeps about the newest `limit` (exactly, without concurrent appends).
            try await connection.perform(
                """
                DELETE FROM device_logs WHERE id <= (SELECT MAX(id) FROM device_logs) - \(Int64(limit))
                """)
        }
    }

    // MARK: Reads

    package func serialNumbers(device: String, passTypeIdentifier: String) async throws -> [String] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE d.library_identifier = \(device) AND r.pass_type_identifier = \(passTypeIdentifier) ORDER BY r.serial_number
                    """, logger: Self.logger), as: String.self)
        }
    }

    package func index(device: String, passTypeIdentifier: String) async throws -> DeviceIndex {
        DeviceIndex(
            device: device, passTypeIdentifier: passTypeIdentifier,
            serialNumbers: try await serialNumbers(device: device, passTypeIdentifier: passTypeIdentifier))
    }

    /// One round trip for a whole batch of the shared index writer.
    package func indices(of keys: [(device: String, passTypeIdentifier: String)]) async throws -> [DeviceIndex] {
        guard !keys.isEmpty else { return [] }
        let devices = keys.map(\.device)
        let types = keys.map(\.passTypeIdentifier)
        return try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT k.device, k.type,
                           ARRAY(SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                                 WHERE d.library_identifier = k.device AND r.pass_type_identifier = k.type ORDER BY r.serial_number)
                    FROM unnest(\(devices)::text[], \(types)::text[]) WITH ORDINALITY AS k(device, type, position)
                    ORDER BY k.position
                    """, logger: Self.logger), as: (String, String, [String]).self
            )
            .map { DeviceIndex(device: $0.0, passTypeIdentifier: $0.1, serialNumbers: $0.2) }
        }
    }

    package func indices(holding passTypeIdentifier: String, serialNumbers: [String]) async throws -> [DeviceIndex] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT d.library_identifier,
                           ARRAY(SELECT serial_number FROM registrations
                                 WHERE device_id = d.id AND pass_type_identifier = \(passTypeIdentifier) ORDER BY serial_number)
                    FROM devices d
                    WHERE EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = d.id
                                  AND r.pass_type_identifier = \(passTypeIdentifier) AND r.serial_number = ANY(\(serialNumbers)))
                    ORDER BY d.library_identifier
                    """, logger: Self.logger), as: (String, [String]).self
            )
            .map { DeviceIndex(device: $0.0, passTypeIdentifier: passTypeIdentifier, serialNumbers: $0.1) }
        }
    }

    package func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String] {
        guard !serialNumbers.isEmpty else { return [] }
        return try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT DISTINCT d.push_token FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE r.pass_type_identifier = \(passTypeIdentifier) AND r.serial_number = ANY(\(serialNumbers))
                    ORDER BY d.push_token
                    """, logger: Self.logger), as: String.self)
        }
    }

    package func recentLogs(limit: Int) async throws -> [LogEntry] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    "SELECT received_at, message FROM device_logs ORDER BY id DESC LIMIT \(max(0, limit))",
                    logger: Self.logger),
                as: (Double, String).self
            )
            .map { LogEntry(receivedAt: $0.0, message: $0.1) }
        }
    }

    package func exportRegistrations(after: ExportedRegistration?, limit: Int) async throws -> [ExportedRegistration] {
        let device = after?.device ?? ""
        let type = after?.passTypeIdentifier ?? ""
        let serial = after?.serialNumber ?? ""
        let limit = max(0, limit)
        return try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    """
                    SELECT d.library_identifier, d.push_token, r.pass_type_identifier, r.serial_number
                    FROM registrations r JOIN devices d ON d.id = r.device_id
                    WHERE (d.library_identifier, r.pass_type_identifier, r.serial_number) > (\(device), \(type), \(serial))
                    ORDER BY d.library_identifier, r.pass_type_identifier, r.serial_number LIMIT \(limit)
                    """, logger: Self.logger), as: (String, String, String, String).self
            )
            .map { ExportedRegistration(device: $0.0, pushToken: $0.1, passTypeIdentifier: $0.2, serialNumber: $0.3) }
        }
    }

    package func statistics() async throws -> RegistrationStatistics {
        try await leased { connection in
            let counts =
                try await Self.first(
                    connection.checkedQuery(
                        """
                        SELECT (SELECT COUNT(*) FROM devices), (SELECT COUNT(*) FROM registrations), (SELECT COUNT(*) FROM device_logs)
                        """, logger: Self.logger), as: (Int, Int, Int).self) ?? (0, 0, 0)
            return RegistrationStatistics(devices: counts.0, registrations: counts.1, logEntries: counts.2)
        }
    }

    package func pushQueueStatistics() async throws -> PushQueueStatistics {
        try await leased { connection in
            let row = try await Self.first(
                connection.checkedQuery(
                    "SELECT COUNT(*)::bigint, MIN(queued_at) FROM push_queue", logger: Self.logger),
                as: (Int, Double?).self)
            return PushQueueStatistics(pending: row?.0 ?? 0, oldestQueuedAt: row?.1 ?? nil)
        }
    }

    // MARK: Helpers

    /// Serializes the changes of these devices (sorted by lock key, so that
    /// two transactions locking several devices cannot deadlock). Works for a
    /// device without a row yet.
    private static func lockDevices(_ devices: [String], _ connection: PostgresConnection) async throws {
        if devices.count == 1 {
            try await connection.perform(
                "SELECT pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(\(devices[0])))")
            return
        }
        let keys = try await collect(
            connection.checkedQuery(
                "SELECT DISTINCT hashtext(device) AS key FROM unnest(\(devices)::text[]) AS device ORDER BY key",
                logger: logger),
            as: Int32.self)
        for key in keys {
            try await connection.perform("SELECT pg_advisory_xact_lock(\(LockKey.deviceClass), \(key))")
        }
    }

    static func nextRevision(_ connection: PostgresConnection) async throws -> Int64 {
        try await first(connection.checkedQuery("SELECT nextval('store_revision')", logger: logger), as: Int64.self)
            ?? 0
    }

    private static func index(
        _ connection: PostgresConnection, deviceID: Int64, device: String, passTypeIdentifier: String
    ) async throws -> DeviceIndex {
        DeviceIndex(
            device: device, passTypeIdentifier: passTypeIdentifier,
            serialNumbers: try await collect(
                connection.checkedQuery(
                    """
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

    static func collect<Column: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: Column.Type)
        async throws -> [Column]
    {
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

    static func first<Column: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: Column.Type)
        async throws -> Column?
    {
        var found: Column?
        for try await row in rows where found == nil { found = try row.decode(Column.self) }
        return found
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
