import Foundation
import Logging
import PostgresNIO
import RegistrationStore

/// Connections: a pooled connection leased with a reachability watchdog, transactions retried
/// after a deadlock, and the queries that refuse a closed connection.
extension PostgresRegistrationStore {
    /// Runs `body` in a transaction on a pooled connection, and returns once its COMMIT is durable.
    ///
    /// Every change whose success the store reports goes through here (or `inTransaction`), even a
    /// single statement: on the extended query protocol PostgreSQL sends a statement's rows and its
    /// CommandComplete at Execute, but commits an implicit (autocommit) transaction, and waits for the
    /// synchronous standby, only at the following Sync, before ReadyForQuery. postgres-nio ends a
    /// query's rows at CommandComplete (1.33, `ExtendedQueryStateMachine.commandCompletedReceived`),
    /// so an autocommit change returned before it was committed: a primary lost in between lost a
    /// change already answered 201 (issue 35, the failover test). A COMMIT statement commits before
    /// its own CommandComplete (postgres.c, `exec_execute_message`: a transaction-control statement
    /// calls `finish_xact_command` before `EndCommand`), so an explicit BEGIN … COMMIT returns only
    /// after the commit, and the standby, have it. The cost: two round trips more per change.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T
    {
        try await leased { connection in try await Self.inTransaction(connection, body) }
    }

    /// BEGIN, `body`, COMMIT; ROLLBACK when `body` fails; again (a few times)
    /// after a deadlock or a serialization failure.
    static func inTransaction<T>(_ connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
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
                if attempt < 5, let psql = error as? PSQLError,
                    ["40001", "40P01"].contains(psql.serverInfo?[.sqlState])
                {
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
    /// retries), or when `requestTimeout` passed. Once it holds one, `body` has
    /// `queryTimeout`: then the connection is closed (a query waiting on it
    /// fails; postgres-nio's do not end on cancellation) and the request fails.
    func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let (client, generation, endpoint) = slot.current
        let lease = LeaseFlag()
        let reachability = self.reachability
        let options = self.options
        let connector = self.connector.connecting(to: endpoint)
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        lease.set(connection)
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Self.watch(lease, connector: connector, reachability: reachability, options: options)
                    return nil
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let value = next { return value }
                }
                throw CancellationError()
            }
        } catch {
            let failure = await failure(error, lease: lease, generation: generation, connector: connector)
            if let storeError = failure as? PostgresStoreError, storeError.isUnavailable, location.endpoints.count > 1 {
                // The server may have gone for good (a failover): look for the one that fits now.
                self.failover.start(from: generation)
            }
            throw failure
        }
    }

    /// The lease's watchdog: throws when the server is unreachable or busy while
    /// the request waits for a connection, and when `body` outlives `queryTimeout`.
    private static func watch(
        _ lease: LeaseFlag, connector: PostgresConnector, reachability: Reachability,
        options: Options
    ) async throws {
        let server = connector.location.server
        let deadline = ContinuousClock.now + options.requestTimeout
        while lease.leasedAt == nil {
            try await Task.sleep(for: options.reachabilityCheckInterval)
            if lease.leasedAt != nil { break }
            if let failure = await reachability.check(connector) { throw failure }
            if lease.leasedAt != nil { break }
            if ContinuousClock.now >= deadline {
                throw PostgresStoreError(
                    kind: .timedOut,
                    description: "no connection to PostgreSQL at \(server) became free within "
                        + "\(options.requestTimeout.components.seconds) s; the server is reachable but busy")
            }
        }
        guard let leasedAt = lease.leasedAt else { return }
        try await Task.sleep(until: leasedAt + options.queryTimeout)
        lease.closeConnection()
        throw PostgresStoreError(
            kind: .timedOut,
            description: "PostgreSQL at \(server) did not answer within "
                + "\(options.queryTimeout.components.seconds) s (the network or the server hangs); "
                + "its connection was closed, \(PostgresStoreError.check)")
    }

    /// What a failed lease throws: postgres-nio's errors translated, and a pool that refused to lease renewed.
    private func failure(
        _ error: any Error, lease: LeaseFlag, generation: Int,
        connector: PostgresConnector
    ) async -> any Error {
        if Task.isCancelled { return error }
        let location = connector.location
        if let translated = PostgresStoreError.translate(error, at: location) {
            if translated.kind == .shutDown, !slot.isClosed {
                // The pool was replaced under the request (a failover, or a renewed pool).
                return PostgresStoreError(
                    kind: .unavailable,
                    description: "the PostgreSQL store replaced its connections "
                        + "(a failover, or a reconnect) while this request waited; try again")
            }
            return translated
        }
        if slot.isClosed {
            return PostgresStoreError(
                kind: .shutDown,
                description: "the PostgreSQL registration store (\(self.location)) was shut down")
        }
        if lease.leasedAt == nil, !RegistrationStoreError.isPushLockBusy(error) {
            // The pool refused to lease (it gave up reconnecting, or was closed).
            if let failure = await reachability.check(connector) { return failure }
            slot.renew(replacing: generation)
            return PostgresStoreError(
                kind: .unavailable,
                description: "PostgreSQL at \(location.server) is reachable again; "
                    + "the store is reconnecting, try again")
        }
        return error
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
