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
    let location: PostgresLocation
    let options: PostgresRegistrationStore.Options
    /// Built once (it loads `sslrootcert`), shared by probes; nil without TLS.
    let sslContext: NIOSSLContext?
    let tlsConfiguration: TLSConfiguration?

    static let silent = Logger(label: "passforge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    init(location: PostgresLocation, options: PostgresRegistrationStore.Options) throws(PostgresStoreError) {
        self.location = location
        self.options = options
        guard location.sslMode != .disable, case .tcp = location.endpoint else {
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
                throw PostgresStoreError(kind: .tls, description: "cannot read sslrootcert \(root) named in \(StoreLocation.environmentVariable)")
            }
            tls.trustRoots = .file(root)
        }
        do {
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw PostgresStoreError(kind: .tls, description: "cannot set up TLS for PostgreSQL at \(location.server): \(PostgresStoreError.reason(error))")
        }
        tlsConfiguration = tls
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
            configuration = .init(host: host, port: port, username: location.user, password: location.password,
                                  database: location.database, tls: tls)
        case .unixSocket:
            configuration = .init(unixSocketPath: location.socketPath ?? "", username: location.user,
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
            case (.require, let context?), (.verifyCA, let context?), (.verifyFull, let context?): tls = .require(context)
            }
            configuration = .init(host: host, port: port, username: location.user, password: location.password,
                                  database: location.database, tls: tls)
        case .unixSocket:
            configuration = .init(unixSocketPath: location.socketPath ?? "", username: location.user,
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
                    try await PostgresConnection.connect(configuration: configuration, id: Self.nextConnectionID(), logger: Self.silent)
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    throw PostgresStoreError.unreachable(location, reason: "no answer within \(limit.components.seconds) s")
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
    static func nextConnectionID() -> Int { connectionIDs.withLock { $0 += 1; return $0 } }
}

/// Set once a request holds a connection; read by its watchdog.
final class LeaseFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// Concurrent "is the server there?" questions share one probe, and its
/// answer is reused for a moment, so a burst of waiting requests costs one
/// connection attempt.
actor Reachability {
    private let connector: PostgresConnector
    private var running: Task<PostgresStoreError?, Never>?
    private var last: (at: ContinuousClock.Instant, result: PostgresStoreError?)?

    init(connector: PostgresConnector) { self.connector = connector }

    func check() async -> PostgresStoreError? {
        if let last, last.at.duration(to: .now) < .milliseconds(500) { return last.result }
        if let running { return await running.value }
        let connector = self.connector
        let task = Task { await connector.probe() }
        running = task
        let result = await task.value
        running = nil
        last = (.now, result)
        return result
    }
}

/// The connection pool and the task running it. Replaced when the pool gave
/// up reconnecting (its circuit breaker opened) while the server is back.
final class PoolSlot: Sendable {
    private struct State {
        var client: PostgresClient
        var runTask: Task<Void, Never>
        var generation = 0
        var closed = false
    }

    private let make: @Sendable () -> PostgresClient
    private let state: Mutex<State>

    init(make: @escaping @Sendable () -> PostgresClient) {
        self.make = make
        let client = make()
        state = Mutex(State(client: client, runTask: Task { await client.run() }))
    }

    var current: (client: PostgresClient, generation: Int) {
        state.withLock { ($0.client, $0.generation) }
    }

    /// Starts a new pool unless one newer than `generation` runs already.
    func renew(replacing generation: Int) {
        let make = self.make
        let old: Task<Void, Never>? = state.withLock { state in
            guard !state.closed, generation == state.generation else { return nil }
            let client = make()
            let previous = state.runTask
            state.client = client
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
