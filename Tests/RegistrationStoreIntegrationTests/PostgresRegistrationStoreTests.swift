import Foundation
import PostgresNIO
import RegistrationStore
import TestSupport
import Testing

@testable import PostgresRegistrationStore

#if canImport(Glibc)
    import Glibc
#endif

/// What only the PostgreSQL store has: URLs, errors for people, TLS, a
/// server that goes away and comes back, several servers on one database.
@Suite struct PostgresRegistrationStoreTests {
    let type = "pass.com.example.test"
    static let tokenA = String(repeating: "ab", count: 32)

    // MARK: URLs (no server needed)

    @Test func parsesLibpqStyleURLs() throws {
        let full = try PostgresLocation(
            url:
                "postgres://us%40er:p%3Ass%2Fw%40rd@db.example.com:6543/pass%20forge?sslmode=verify-full&sslrootcert=/etc/ca.pem"
        )
        #expect(full.endpoint == .tcp(host: "db.example.com", port: 6543))
        #expect(full.user == "us@er")
        #expect(full.password == "p:ss/w@rd")
        #expect(full.database == "pass forge")
        #expect(full.sslMode == .verifyFull)
        #expect(full.sslRootCertificate == "/etc/ca.pem")
        #expect(full.server == "db.example.com:6543")

        let plain = try PostgresLocation(url: "postgresql://app:secret@db/passforge")
        #expect(plain.endpoint == .tcp(host: "db", port: 5432))
        #expect(plain.sslMode == .prefer)  // libpq's default
        #expect(plain.database == "passforge")

        let noDatabase = try PostgresLocation(url: "POSTGRES://app@10.0.0.7:5433")
        #expect(noDatabase.database == "app")  // libpq: the user's name
        #expect(noDatabase.password == nil)

        let ipv6 = try PostgresLocation(url: "postgres://app:pw@[::1]:5433/db?sslmode=disable")
        #expect(ipv6.endpoint == .tcp(host: "::1", port: 5433))
        #expect(ipv6.server == "[::1]:5433")
        #expect(ipv6.sslMode == .disable)

        let socket = try PostgresLocation(url: "postgres://app@/db?host=/var/run/postgresql")
        #expect(socket.endpoint == .unixSocket(directory: "/var/run/postgresql", port: 5432))
        #expect(socket.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        let encodedSocket = try PostgresLocation(url: "postgres://app@%2Ftmp%2Fpg:6000/db")
        #expect(encodedSocket.socketPath == "/tmp/pg/.s.PGSQL.6000")

        let raw = try PostgresLocation(url: "postgres://app:pa/ss@word@db:5432/x")  // unencoded / and @ in a password
        #expect(raw.password == "pa/ss@word")
        #expect(raw.endpoint == .tcp(host: "db", port: 5432))
        #expect(raw.database == "x")

        for mode in PostgresLocation.SSLMode.allCases {
            #expect(try PostgresLocation(url: "postgres://a@h/d?sslmode=\(mode.rawValue)").sslMode == mode)
        }
    }

    @Test func parsesSeveralHostsAsLibpq() throws {
        let pair = try PostgresLocation(url: "postgres://app:pw@h1:5432,h2:5433/db?target_session_attrs=read-write")
        #expect(pair.endpoints == [.tcp(host: "h1", port: 5432), .tcp(host: "h2", port: 5433)])
        #expect(pair.endpoint == .tcp(host: "h1", port: 5432))
        #expect(pair.targetSession == .readWrite)
        #expect(pair.servers == "h1:5432, h2:5433")
        #expect(pair.description == "postgres://app@h1:5432,h2:5433/db?target_session_attrs=read-write")
        #expect(try PostgresLocation(url: pair.description).endpoints == pair.endpoints)
        #expect(pair.connecting(to: pair.endpoints[1]).server == "h2:5433")

        let defaults = try PostgresLocation(url: "postgres://app@h1,[::1]:6000,h3/db")
        #expect(
            defaults.endpoints == [
                .tcp(host: "h1", port: 5432), .tcp(host: "::1", port: 6000), .tcp(host: "h3", port: 5432),
            ])
        #expect(defaults.targetSession == .any)  // libpq's default

        let lists = try PostgresLocation(
            url: "postgres://app@/db?host=h1,h2&port=7000,7001&target_session_attrs=prefer-standby")
        #expect(lists.endpoints == [.tcp(host: "h1", port: 7000), .tcp(host: "h2", port: 7001)])
        #expect(lists.targetSession == .preferStandby)
        let onePort = try PostgresLocation(url: "postgres://app@/db?host=h1,h2&port=7000")
        #expect(onePort.endpoints == [.tcp(host: "h1", port: 7000), .tcp(host: "h2", port: 7000)])
        for target in PostgresLocation.TargetSession.allCases {
            #expect(
                try PostgresLocation(url: "postgres://a@h1,h2/d?target_session_attrs=\(target.rawValue)").targetSession
                    == target)
        }
    }

    @Test func theSessionRoleFitsTargetSessionAttrsAsLibpq() {
        let primary = SessionRole(inRecovery: false, readOnly: false)
        let standby = SessionRole(inRecovery: true, readOnly: true)
        let readOnlyPrimary = SessionRole(inRecovery: false, readOnly: true)  // default_transaction_read_only = on
        #expect(primary.fits(.readWrite) && !standby.fits(.readWrite) && !readOnlyPrimary.fits(.readWrite))
        #expect(!primary.fits(.readOnly) && standby.fits(.readOnly) && readOnlyPrimary.fits(.readOnly))
        #expect(primary.fits(.primary) && !standby.fits(.primary) && readOnlyPrimary.fits(.primary))
        #expect(!primary.fits(.standby) && standby.fits(.standby))
        #expect(primary.fits(.any) && standby.fits(.any) && primary.fits(.preferStandby))
    }

    @Test func rejectsBadURLsWithoutShowingThePassword() throws {
        let cases = [
            "mysql://app:hunter2@db/x",
            "postgres://app:hunter2@db:99999/x",
            "postgres://app:hunter2@db/x?sslmode=sometimes",
            "postgres://app:hunter2@db/x?tcp_keepalives=1",
            "postgres://app:hunter2@db1,db2/x?port=1,2,3",
            "postgres://app:hunter2@db1,db2/x?target_session_attrs=writable",
            "postgres://app:hunter2@db/x?password=hunter2&sslmode=nope",
        ]
        for url in cases {
            do {
                _ = try PostgresLocation(url: url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(error.kind == .invalidURL)
                #expect(!error.description.contains("hunter2"), "\(error.description)")
                #expect(error.description.contains("PASSFORGE_DATABASE_URL"))
            }
        }
    }

    @Test func descriptionsNeverShowThePassword() throws {
        for url in [
            "postgres://app:hunter2@db.example.com:5432/passforge?sslmode=require",
            "postgresql://app:hun%40ter2@db.example.com/passforge",
            "postgres://app@db.example.com/passforge?password=hunter2",
        ] {
            let location = try PostgresLocation(url: url)
            #expect(location.password?.contains("ter2") == true)
            #expect(!location.description.contains("ter2"), "\(location.description)")
            #expect(!String(reflecting: StoreLocation.postgres(url: url).description).contains("hunter2"))
            #expect(location.description.contains("app@db.example.com"))
        }
        #expect(
            try PostgresLocation(url: "postgres://app:x@db:6543/p?sslmode=require").description
                == "postgres://app@db:6543/p?sslmode=require")
    }

    // MARK: Errors for people

    @Test func aWrongPasswordSaysAuthenticationFailedWithoutThePassword() async throws {
        let good = try PostgresLocation(url: try PostgresTestEnvironment.url())
        var wrong = good
        wrong.password = "not-the-password-7f3a"
        let error = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(location: wrong)
        }
        #expect(error.kind == .authenticationFailed)
        #expect(error.description.contains("authentication failed for user \"\(good.user)\""), "\(error)")
        #expect(error.description.contains(good.server))
        for text in [error.description, String(reflecting: error), error.localizedDescription] {
            #expect(!text.contains("not-the-password-7f3a"))
            #expect(!text.contains(good.password ?? "-"))
            #expect(!text.contains("PSQLError"))
        }
    }

    @Test func aMissingDatabaseSaysSo() async throws {
        let url = PostgresTestEnvironment.url(try PostgresTestEnvironment.url(), database: "no_such_database_here")
        let error = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(url: url)
        }
        #expect(error.kind == .databaseMissing)
        #expect(error.description.contains("the database \"no_such_database_here\" does not exist"), "\(error)")
        #expect(error.sqlState == "3D000")
    }

    @Test func anUnreachablePortFailsFastAndClearly() async throws {
        let port = try Self.unusedPort()
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(
                url: "postgres://app:hunter2@127.0.0.1:\(port)/x?sslmode=disable")
        }
        // Not an endless hang (a bound, not a benchmark). Alone this takes milliseconds; in the whole
        // suite on 2 cores the tests that wait on processes hold the cooperative threads, and resuming
        // this one took up to 123 s, so only a hang is caught here; the message below shows the cause.
        #expect(start.duration(to: clock.now) < .seconds(300))
        #expect(error.kind == .unreachable)
        #expect(
            error.description
                == "cannot reach PostgreSQL at 127.0.0.1:\(port): connection refused; check PASSFORGE_DATABASE_URL and that the server is running"
        )
        #expect(error.isUnavailable)
    }

    // MARK: TLS and sockets

    @Test func sslmodeRequireUsesTLS() async throws {
        let url = PostgresTestEnvironment.url(try await PostgresTestServer.freshDatabase(), query: "sslmode=require")
        let store = try await PostgresRegistrationStore.connect(url: url)
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        let database = try PostgresTestServer.databaseName(url)
        let ssl = try await PostgresTestServer.withAdmin(try PostgresTestEnvironment.url()) { admin in
            try await admin.query(
                """
                SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid
                WHERE a.datname = \(database) AND a.pid <> pg_backend_pid()
                """, logger: PostgresTestServer.logger
            ).column(Bool.self)
        }
        #expect(!ssl.isEmpty)
        #expect(ssl.allSatisfy { $0 })
        await store.shutdown()
    }

    @Test func verifyFullChecksTheCertificate() async throws {
        let ca = try PostgresTestEnvironment.variable("PASSFORGE_TEST_POSTGRES_CA")
        let fresh = try await PostgresTestServer.freshDatabase()
        let byName = fresh.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")
        // Trusted root and a certificate naming localhost: connects.
        let store = try await PostgresRegistrationStore.connect(
            url: PostgresTestEnvironment.url(byName, query: "sslmode=verify-full&sslrootcert=\(ca)"))
        #expect(try await store.statistics().devices == 0)
        await store.shutdown()
        // The system's roots do not know the test certificate: refused, and said so.
        let error = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(
                url: PostgresTestEnvironment.url(byName, query: "sslmode=verify-full"))
        }
        #expect(error.kind == .tls)
        #expect(error.description.contains("cannot set up TLS with PostgreSQL at localhost:"), "\(error)")
        #expect(error.description.contains("certificate"), "\(error)")
        // A missing root file is named.
        let missing = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(
                url: PostgresTestEnvironment.url(byName, query: "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"))
        }
        #expect(missing.description.contains("/nonexistent/ca.pem"))
    }

    @Test func connectsThroughAUnixSocket() async throws {
        let folder = try PostgresTestEnvironment.variable("PASSFORGE_TEST_POSTGRES_SOCKET_DIR")
        let tcp = try PostgresLocation(url: try await PostgresTestServer.freshDatabase())
        guard case .tcp(_, let port) = tcp.endpoint else {
            throw PostgresTestEnvironment.NotConfigured(description: "not TCP")
        }
        // Trust on the socket, as the script sets it: no password.
        let store = try await PostgresRegistrationStore.connect(
            url: "postgres://\(tcp.user)@:\(port)/\(tcp.database)?host=\(folder)")
        #expect(store.location.socketPath == "\(folder)/.s.PGSQL.\(port)")
        let change = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(change.outcome == .created)
        await store.shutdown()
    }

    // MARK: Several servers on one database

    @Test func twoStoresRacingTwoHundredDuplicateRegistrationsMakeOneRow() async throws {
        let url = try await PostgresTestServer.freshDatabase()
        let first = try await PostgresRegistrationStore.connect(url: url)
        let second = try await PostgresRegistrationStore.connect(url: url)
        let type = self.type
        let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
            for attempt in 0..<200 {
                let store = attempt.isMultiple(of: 2) ? first : second
                group.addTask {
                    try await store.register(
                        device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1"
                    ).outcome
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .created }.count == 1)
        #expect(outcomes.filter { $0 == .unchanged }.count == 199)
        #expect(try await first.statistics() == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
        #expect(try await second.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1"])
        await first.shutdown()
        await second.shutdown()
    }

    @Test func serversStartingTogetherMigrateOnce() async throws {
        let url = try await PostgresTestServer.freshDatabase()
        let stores = try await withThrowingTaskGroup(of: PostgresRegistrationStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresRegistrationStore.connect(url: url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.count == 4)
        let expected = PostgresRegistrationStore.migrations.map(\.0)
        #expect(try await stores[0].appliedMigrations() == expected)
        // A later start finds nothing to do.
        let later = try await PostgresRegistrationStore.connect(url: url)
        #expect(try await later.appliedMigrations() == expected)
        for store in stores + [later] { await store.shutdown() }
    }

    @Test func theDatabaseRejectsDuplicateRowsItself() async throws {
        let url = try await PostgresTestServer.freshDatabase()
        let store = try await PostgresRegistrationStore.connect(url: url)
        await store.shutdown()
        try await PostgresTestServer.withAdmin(url) { db in
            let log = PostgresTestServer.logger
            try await db.query(
                "INSERT INTO devices (library_identifier, push_token, created_at, updated_at) VALUES ('d', 't', 0, 0)",
                logger: log)
            let id = try await db.query("SELECT id FROM devices", logger: log).column(Int64.self)[0]
            try await db.query("INSERT INTO registrations VALUES (\(id), 'p', 's', 0)", logger: log)
            for (sql, state) in [
                ("INSERT INTO registrations VALUES (\(id), 'p', 's', 0)", "23505"),
                ("INSERT INTO registrations VALUES (\(id + 99), 'p', 's', 0)", "23503"),
                (
                    "INSERT INTO devices (library_identifier, push_token, created_at, updated_at) VALUES ('d', 'u', 0, 0)",
                    "23505"
                ),
            ] {
                let error = try await #require(throws: PSQLError.self) {
                    try await db.query(PostgresQuery(unsafeSQL: sql), logger: log)
                }
                #expect(error.serverInfo?[.sqlState] == state)
            }
            try await db.query("DELETE FROM devices", logger: log)
            #expect(try await db.query("SELECT COUNT(*) FROM registrations", logger: log).column(Int.self) == [0])
        }
    }

    @Test func thePushLockIsReleasedWhenTheRunFails() async throws {
        struct RunFailed: Error {}
        let url = try await PostgresTestServer.freshDatabase()
        let store = try await PostgresRegistrationStore.connect(url: url)
        let other = try await PostgresRegistrationStore.connect(url: url)
        await #expect(throws: RunFailed.self) { try await store.withPushLock { throw RunFailed() } }
        #expect(try await other.withPushLock { 3 } == 3)
        await store.shutdown()
        await other.shutdown()
    }

    @Test func aShutDownStoreSaysSo() async throws {
        let store = try await PostgresRegistrationStore.connect(url: try await PostgresTestServer.freshDatabase())
        await store.shutdown()
        let error = try await #require(throws: PostgresStoreError.self) { _ = try await store.statistics() }
        #expect(error.kind == .shutDown)
    }

    // MARK: The server goes away and comes back

    /// On the restart server (no other test uses it, and it has no TLS): a request waiting in the
    /// database when the server stops fails at once; requests while it is down
    /// fail fast with "cannot reach"; after it is back the store works again.
    @Test(.timeLimit(.minutes(2))) func aStoppedServerFailsRequestsFastAndTheStoreRecovers() async throws {
        let server = try PostgresTestEnvironment.variable("PASSFORGE_TEST_POSTGRES_RESTART_URL")
        let data = try PostgresTestEnvironment.variable("PASSFORGE_TEST_POSTGRES_RESTART_DATA")
        let url = try await PostgresTestServer.freshDatabase(on: server)
        let database = try PostgresTestServer.databaseName(url)
        // This server has no TLS: sslmode=require refuses it, and says why.
        let noTLS = try await #require(throws: PostgresStoreError.self) {
            _ = try await PostgresRegistrationStore.connect(
                url: PostgresTestEnvironment.url(url, query: "sslmode=require"))
        }
        #expect(noTLS.kind == .tls)
        #expect(noTLS.description.contains("does not offer TLS, and sslmode=require requires it"), "\(noTLS)")
        let store = try await PostgresRegistrationStore.connect(url: url)
        let type = self.type
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")

        // A registration blocked inside the database: another session holds its device's lock.
        let admin = try await PostgresConnection.connect(
            configuration: .init(
                host: "127.0.0.1", port: try Self.port(of: url), username: try PostgresLocation(url: url).user,
                password: try PostgresLocation(url: url).password, database: database, tls: .disable),
            id: 7, logger: PostgresTestServer.logger)
        try await admin.query(
            "SELECT pg_advisory_lock(\(PostgresRegistrationStore.LockKey.deviceClass), hashtext('dev-blocked'))",
            logger: PostgresTestServer.logger)
        let blocked = Task {
            try await store.register(
                device: "dev-blocked", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-9")
        }
        try await Self.eventually("the registration waits for the lock") {
            try await admin.query(
                """
                SELECT COUNT(*) FROM pg_stat_activity WHERE datname = \(database) AND wait_event_type = 'Lock'
                """, logger: PostgresTestServer.logger
            ).column(Int.self) == [1]
        }

        // Immediate, not fast: a fast shutdown ends the lock holder's session first, which releases the lock,
        // and on a loaded machine the waiting registration could then commit before its own session is ended.
        // An immediate shutdown ends every session without releasing anything (crash recovery at the next start
        // keeps what was committed).
        let stop = try await PostgresTestServer.pgCtl(["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"])
        #expect(stop.status == 0, "pg_ctl stop: \(stop.output)")
        let clock = ContinuousClock()
        var started = clock.now
        do {
            _ = try await blocked.value
            Issue.record("a registration succeeded on a stopped server")
        } catch let error as PostgresStoreError {
            #expect(error.isUnavailable, "\(error)")
            #expect(error.description.contains("127.0.0.1:"), "\(error)")
        }
        #expect(started.duration(to: clock.now) < .seconds(20))
        try? await admin.close()

        // While it is down: fast, clear failures. The first request may meet a pooled connection the stop ended
        // (connectionLost) before the pool has noticed; once it has, every request is refused as unreachable.
        started = clock.now
        let port = try Self.port(of: url)
        let first = try await #require(throws: PostgresStoreError.self) { _ = try await store.statistics() }
        #expect(started.duration(to: clock.now) < .seconds(20))
        #expect(first.isUnavailable && first.description.contains("127.0.0.1:\(port)"), "\(first)")
        var down = first
        for _ in 0..<5 where down.kind != .unreachable {
            down = try await #require(throws: PostgresStoreError.self) { _ = try await store.statistics() }
        }
        #expect(down.kind == .unreachable, "\(down)")
        #expect(down.description.hasPrefix("cannot reach PostgreSQL at 127.0.0.1:\(port)"), "\(down)")

        let start = try await PostgresTestServer.pgCtl([
            "-D", data, "-l", data + "/server.log", "-w", "-t", "60", "start",
        ])
        #expect(start.status == 0, "pg_ctl start: \(start.output)")
        // Back: the pool reconnects, and nothing acknowledged was lost.
        // The pool retries a lost server with a growing delay (postgres-nio: 100 ms × 1.25^n, at most a minute),
        // so the first retry after the start may come many seconds later on a loaded machine; failing that, a request
        // that waited its whole requestTimeout (30 s) for the pool finds the server reachable and renews the pool.
        try await Self.eventually("the store works again", within: .seconds(100)) {
            (try? await store.statistics()) != nil
        }
        #expect(try await store.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1"])
        let after = try await store.register(
            device: "dev2", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        #expect(after.outcome == .created)
        await store.shutdown()
    }

    // MARK: Helpers

    static func port(of url: String) throws -> Int {
        guard case .tcp(_, let port) = try PostgresLocation(url: url).endpoint else {
            throw PostgresTestEnvironment.NotConfigured(description: "not TCP")
        }
        return port
    }

    static func eventually(_ what: String, within limit: Duration = .seconds(10), _ condition: () async throws -> Bool)
        async throws
    {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while clock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting until \(what)")
        throw CancellationError()
    }

    /// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func unusedPort() throws -> Int { try Loopback.freePort() }
}
