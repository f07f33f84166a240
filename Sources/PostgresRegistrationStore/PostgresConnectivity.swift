import AtomicFiles
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import RegistrationStore
import Synchronization

/// How the PostgreSQL store reaches its server: the pool's configuration, a
/// single probing connection that tells why a server cannot be reached, and
/// the pool itself, which can be replaced once its reconnecting gave up.
struct PostgresConnector: Sendable {
    private(set) var location: PostgresLocation
    let options: PostgresRegistrationStore.Options
    /// Built once (it loads `sslrootcert`), shared by probes; nil without TLS.
    let sslContext: NIOSSLContext?
    let tlsConfiguration: TLSConfiguration?

    static let silent = Logger(label: "passforge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    init(location: PostgresLocation, options: PostgresRegistrationStore.Options) throws(PostgresStoreError) {
        self.location = location
        self.options = options
        let anyTCP = location.endpoints.contains { if case .tcp = $0 { true } else { false } }
        guard location.sslMode != .disable, anyTCP else {
            sslContext = nil
            tlsConfiguration = nil
            return
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch location.sslMode {
        case .disable, .allow, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let root = location.sslRootCertificate {
            guard AtomicFileSystem.isReadable(root) else {
                throw PostgresStoreError(
                    kind: .tls,
                    description: "cannot read sslrootcert \(root) named in \(StoreLocation.environmentVariable)")
            }
            tls.trustRoots = .file(root)
        }
        do {
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw PostgresStoreError(
                kind: .tls,
                description:
                    "cannot set up TLS for PostgreSQL at \(location.server): \(PostgresStoreError.reason(error))")
        }
        tlsConfiguration = tls
    }

    /// The same settings, connecting to another of the URL's servers.
    func connecting(to endpoint: PostgresLocation.Endpoint) -> PostgresConnector {
        var connector = self
        connector.location = location.connecting(to: endpoint)
        return connector
    }

    var connectTimeout: Duration {
        location.connectTimeout.map { .seconds($0) } ?? options.connectTimeout
    }

    private var startupParameters: [(String, String)] {
        [("application_name", location.applicationName ?? "passforge")]
    }

    func clientConfiguration() -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch location.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS
            switch (location.sslMode, tlsConfiguration) {
            case (.disable, _), (_, nil): tls = .disable
            case (.allow, let config?), (.prefer, let config?): tls = .prefer(config)
            case (.require, let config?), (.verifyCA, let config?), (.verifyFull, let config?): tls = .require(config)
            }
            configuration = .init(
                host: host, port: port, username: location.user, password: location.password,
                database: location.database, tls: tls)
        case .unixSocket:
            configuration = .init(
                unixSocketPath: location.socketPath ?? "", username: location.user,
                password: location.password, database: location.database)
        }
        configuration.options.connectTimeout = connectTimeout
        configuration.options.maximumConnections = max(1, options.maximumConnections)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    private func connectionConfiguration() -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch location.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch (location.sslMode, sslContext) {
            case (.disable, _), (_, nil): tls = .disable
            case (.allow, let context?), (.prefer, let context?): tls = .prefer(context)
            case (.require, let context?), (.verifyCA, let context?), (.verifyFull, let context?):
                tls = .require(context)
            }
            configuration = .init(
                host: host, port: port, username: location.user, password: location.password,
                database: location.database, tls: tls)
        case .unixSocket:
            configuration = .init(
                unixSocketPath: location.socketPath ?? "", username: location.user,
                password: location.password, database: location.database)
        }
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// One connection outside the pool, for migrating and for probing; its
    /// errors are translated. Bounded by the connect timeout (twice: TCP, then
    /// the login), so a server that accepts and then says nothing cannot hang it.
    func openConnection() async throws(PostgresStoreError) -> PostgresConnection {
        let configuration = connectionConfiguration()
        let location = self.location
        let limit = connectTimeout * 2
        do {
            return try await withThrowingTaskGroup(of: PostgresConnection?.self) { group in
                group.addTask {
                    try await PostgresConnection.connect(
                        configuration: configuration, id: Self.nextConnectionID(), logger: Self.silent)
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    throw PostgresStoreError.unreachable(
                        location, reason: "no answer within \(limit.components.seconds) s")
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let connection = next { return connection }
                }
                throw CancellationError()
            }
        } catch {
            throw PostgresStoreError.translate(error, at: location)
                ?? PostgresStoreError.unreachable(location, reason: PostgresStoreError.reason(error))
        }
    }

    /// Nil when a fresh connection can be made; else why not.
    func probe() async -> PostgresStoreError? {
        do {
            let connection = try await openConnection()
            try? await connection.close()
            return nil
        } catch {
            return error
        }
    }

    private static let connectionIDs = Mutex(0)
    static func nextConnectionID() -> Int {
        connectionIDs.withLock {
            $0 += 1
            return $0
        }
    }
}

/// Set once a request holds a connection (when, and which); read by its watchdog.
final class LeaseFlag: Sendable {
    private let value = Mutex<(at: ContinuousClock.Instant, connection: PostgresConnection)?>(nil)
    func set(_ connection: PostgresConnection) { value.withLock { $0 = (.now, connection) } }
    var leasedAt: ContinuousClock.Instant? { value.withLock { $0?.at } }
    /// Closes the leased connection at once: a query waiting on it fails.
    func closeConnection() {
        let connection = value.withLock { $0?.connection }
        let _: EventLoopFuture<Void>? = connection?.close()
    }
}

/// Concurrent "is the server there?" questions share one probe, and its
/// answer is reused for a moment, so a burst of waiting requests costs one
/// connection attempt. The question is about one server of the URL: the one
/// the pool uses now.
actor Reachability {
    private var running: (server: String, task: Task<PostgresStoreError?, Never>)?
    private var last: (server: String, at: ContinuousClock.Instant, result: PostgresStoreError?)?

    func check(_ connector: PostgresConnector) async -> PostgresStoreError? {
        let server = connector.location.server
        if let last, last.server == server, last.at.duration(to: .now) < .milliseconds(500) { return last.result }
        if let running, running.server == server { return await running.task.value }
        let task = Task { await connector.probe() }
        running = (server, task)
        let result = await task.value
        if running?.server == server { running = nil }
        last = (server, .now, result)
        return result
    }
}

/// Runs `body` at most `limit`: past it, `onExpiry` runs (it must make `body`
/// end, e.g. by closing the connection a query waits on: postgres-nio's
/// queries do not end when their task is cancelled) and a `.timedOut` error is thrown.
enum Deadline {
    struct Expired: Error {}

    static func run<T: Sendable>(
        _ limit: Duration, onExpiry: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                onExpiry()
                throw Expired()
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }
}

/// The connection pool and the task running it, on one of the URL's servers.
/// Replaced when the pool gave up reconnecting (its circuit breaker opened)
/// while the server is back, and when another server has to be used (a failover).
final class PoolSlot: Sendable {
    typealias Endpoint = PostgresLocation.Endpoint

    private struct State {
        var client: PostgresClient
        var endpoint: Endpoint
        var runTask: Task<Void, Never>
        var generation = 0
        var closed = false
    }

    private let make: @Sendable (Endpoint) -> PostgresClient
    private let state: Mutex<State>

    init(endpoint: Endpoint, make: @escaping @Sendable (Endpoint) -> PostgresClient) {
        self.make = make
        let client = make(endpoint)
        state = Mutex(State(client: client, endpoint: endpoint, runTask: Task { await client.run() }))
    }

    var current: (client: PostgresClient, generation: Int, endpoint: Endpoint) {
        state.withLock { ($0.client, $0.generation, $0.endpoint) }
    }

    /// Starts a new pool (on `endpoint`, else the same server) unless one newer than `generation` runs already.
    func renew(replacing generation: Int, on endpoint: Endpoint? = nil) {
        let make = self.make
        let old: Task<Void, Never>? = state.withLock { state in
            guard !state.closed, generation == state.generation else { return nil }
            let target = endpoint ?? state.endpoint
            let client = make(target)
            let previous = state.runTask
            state.client = client
            state.endpoint = target
            state.generation += 1
            state.runTask = Task { await client.run() }
            return previous
        }
        old?.cancel()
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Stops the pool: cancelling `run()` closes its connections.
    func close() -> Task<Void, Never>? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            state.runTask.cancel()
            return state.runTask
        }
    }
}
