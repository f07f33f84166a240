import Logging
import NIOCore
import PostgresNIO
import RegistrationStore
import Synchronization

// Several servers in PASSFORGE_DATABASE_URL, as libpq takes them
// (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS):
// the store uses the one that fits target_session_attrs, and moves to another
// when that one goes away or stops accepting writes (a standby promoted).

/// Which of the URL's servers the store uses (libpq's `target_session_attrs`):
/// each is asked at once, with a connection of its own, whether its sessions
/// are read-only and whether it is in recovery; the first in the URL's order
/// that fits wins. Concurrent searches share one, and an answer is reused for
/// a moment, so that the requests failing during a failover cost one search.
actor ServerSelection {
    typealias Endpoint = PostgresLocation.Endpoint
    private let connector: PostgresConnector
    private var running: Task<Result<Endpoint, PostgresStoreError>, Never>?
    private var last: (at: ContinuousClock.Instant, result: Result<Endpoint, PostgresStoreError>)?

    init(connector: PostgresConnector) { self.connector = connector }

    func find() async -> Result<Endpoint, PostgresStoreError> {
        if let last, last.at.duration(to: .now) < .milliseconds(200) { return last.result }
        if let running { return await running.value }
        let connector = self.connector
        let task = Task { await connector.findServer() }
        running = task
        let result = await task.value
        running = nil
        last = (.now, result)
        return result
    }
}

/// What one server's session is, as `target_session_attrs` sees it.
struct SessionRole: Sendable, Equatable {
    var inRecovery: Bool
    var readOnly: Bool

    func fits(_ target: PostgresLocation.TargetSession) -> Bool {
        switch target {
        case .any, .preferStandby: return true
        case .readWrite: return !readOnly
        case .readOnly: return readOnly
        case .primary: return !inRecovery
        case .standby: return inRecovery
        }
    }
}

extension PostgresConnector {
    /// The first of the URL's servers whose session fits `target_session_attrs`
    /// (`prefer-standby`: the first standby, else the first that answers); else why none.
    func findServer() async -> Result<PostgresLocation.Endpoint, PostgresStoreError> {
        let endpoints = location.endpoints
        let target = location.targetSession
        if endpoints.count == 1, target == .any { return .success(endpoints[0]) }
        let roles = await withTaskGroup(of: (Int, Result<SessionRole, PostgresStoreError>).self) { group in
            for (number, endpoint) in endpoints.enumerated() {
                group.addTask { (number, await connecting(to: endpoint).sessionRole()) }
            }
            var roles = [Result<SessionRole, PostgresStoreError>?](repeating: nil, count: endpoints.count)
            for await (number, role) in group { roles[number] = role }
            return roles.compactMap { $0 }
        }
        let preferred: PostgresLocation.TargetSession = target == .preferStandby ? .standby : target
        for wanted in [preferred, target] {
            for (number, role) in roles.enumerated() {
                if case .success(let role) = role, role.fits(wanted) { return .success(endpoints[number]) }
            }
        }
        return .failure(noServerFits(roles))
    }

    private func noServerFits(_ roles: [Result<SessionRole, PostgresStoreError>]) -> PostgresStoreError {
        let failures = roles.compactMap { if case .failure(let error) = $0 { error } else { nil } }
        if failures.count == roles.count, failures.count == 1 { return failures[0] }
        if failures.count == roles.count {
            return PostgresStoreError(
                kind: .unreachable,
                description: "cannot reach any PostgreSQL server of "
                    + "\(StoreLocation.environmentVariable) (\(location.servers)): "
                    + failures.map(\.description).joined(separator: "; "))
        }
        let wanted = location.targetSession.rawValue
        return PostgresStoreError(
            kind: .unavailable,
            description: "no PostgreSQL server of \(location.servers) has "
                + "target_session_attrs=\(wanted) now (during a failover, until the standby is promoted); try again")
    }

    /// Whether this server is a standby, and whether its sessions may write, on a connection of its own.
    func sessionRole() async -> Result<SessionRole, PostgresStoreError> {
        let connection: PostgresConnection
        do {
            connection = try await openConnection()
        } catch {
            return .failure(error)
        }
        let location = self.location
        let limit = connectTimeout
        do {
            let role = try await Deadline.run(limit, onExpiry: { let _: EventLoopFuture<Void> = connection.close() }) {
                // libpq asks SHOW transaction_read_only for read-write and read-only,
                // pg_is_in_recovery() for the others.
                let rows = try await connection.checkedQuery(
                    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: Self.silent)
                var role: SessionRole?
                for try await row in rows {
                    let (inRecovery, readOnly) = try row.decode((Bool, Bool).self)
                    role = SessionRole(inRecovery: inRecovery, readOnly: readOnly)
                }
                return role ?? SessionRole(inRecovery: false, readOnly: false)
            }
            try? await connection.close()
            return .success(role)
        } catch {
            let _: EventLoopFuture<Void> = connection.close()
            if error is Deadline.Expired {
                return .failure(.unreachable(location, reason: "no answer within \(limit.components.seconds) s"))
            }
            return .failure(
                PostgresStoreError.translate(error, at: location)
                    ?? PostgresStoreError.unreachable(location, reason: PostgresStoreError.reason(error)))
        }
    }
}

/// Moves the pool to the server that fits `target_session_attrs` after a
/// request found the current one gone or read-only: one search at a time,
/// repeated every `interval` until a server fits (while the old primary is
/// down and the standby not promoted yet, none does) or the pool was renewed
/// meanwhile. Requests are not held meanwhile: they fail at once (503 and
/// Retry-After for a device), and succeed again once the pool has moved.
final class Failover: Sendable {
    private let selection: ServerSelection
    private let location: PostgresLocation
    private let slot: PoolSlot
    private let interval: Duration
    private let logger: Logger?
    private let searching = Mutex(false)
    /// How long one failover keeps looking before it waits for the next failing request.
    static let patience: Duration = .seconds(120)

    init(selection: ServerSelection, location: PostgresLocation, slot: PoolSlot, interval: Duration, logger: Logger?) {
        self.selection = selection
        self.location = location
        self.slot = slot
        self.interval = interval
        self.logger = logger
    }

    /// Starts a search unless one runs; `generation` is the pool the request found broken.
    func start(from generation: Int) {
        let started = searching.withLock { running in
            if running { return false }
            running = true
            return true
        }
        guard started else { return }
        Task { [self] in
            await search(from: generation)
            searching.withLock { $0 = false }
        }
    }

    private func search(from generation: Int) async {
        let deadline = ContinuousClock.now + Self.patience
        while ContinuousClock.now < deadline, !slot.isClosed {
            let current = slot.current
            guard current.generation == generation else { return }
            switch await selection.find() {
            case .success(let endpoint):
                if endpoint != current.endpoint {
                    let server = location.connecting(to: endpoint).server
                    logger?.notice("PostgreSQL failover: the store now uses \(server)")
                    slot.renew(replacing: generation, on: endpoint)
                }
                return
            case .failure:
                try? await Task.sleep(for: interval)
            }
        }
    }
}
