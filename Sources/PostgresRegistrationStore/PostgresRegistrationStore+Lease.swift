import Foundation
import Logging
import PostgresNIO
import RegistrationStore

/// Connections: a pooled connection leased with a reachability watchdog, transactions retried
/// after a deadlock, and the queries that refuse a closed connection.
extension PostgresRegistrationStore {
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
