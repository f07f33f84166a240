import ConcurrencySupport
import Foundation
import SQLiteRegistrationStore
import TestSupport
import Testing
import WalletTree

/// Several `passforge serve` processes on one PostgreSQL database (started by
/// scripts/with-postgres.sh, which `make test` runs the tests under).
@Suite(.serialized) struct PostgresServeTests {
    /// A new, empty database on the throwaway server, as a URL.
    static func freshDatabase() throws -> String {
        try PostgresTestEnvironment.freshDatabase(prefix: "serve")
    }

    static func psql(_ url: String, _ sql: String) throws -> ProcessResult {
        try runProcess("psql", [url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    static func value(_ url: String, _ sql: String) throws -> String {
        try psql(url, sql).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `psql` for async tests: suspends until it ends, holding none of the test runner's threads.
    static func psql(_ url: String, _ sql: String) async throws -> ProcessResult {
        try await runProcessWithoutBlocking("psql", [url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    static func value(_ url: String, _ sql: String) async throws -> String {
        try await psql(url, sql).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `passforge migrate-store` in `folder`, through the async process harness.
    static func migrateStore(_ arguments: [String], in folder: TemporaryDirectory) async throws -> ProcessResult {
        try await runProcessWithoutBlocking(
            passforgeExecutable(), ["migrate-store"] + arguments, directory: folder.path)
    }

    @Test func twoServersOnOneDatabaseKeepEveryIndexRight() async throws {
        let database = try Self.freshDatabase()
        let built = try await BuiltProject.make(passCount: 2)
        built.environment["PASSFORGE_DATABASE_URL"] = database
        // One client address registers 1,000 devices: no per-client limit here.
        let first = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let second = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
        let clients = [Client(base: first.base), Client(base: second.base)]
        let type = built.type
        let tokens = ["C-0000": try await built.token("C-0000"), "C-0001": try await built.token("C-0001")]

        // 1,000 devices; every odd one registers its two passes through different servers at once.
        let devices = (0..<1000).map { String(format: "pgdevice%04d", $0) }
        var registrations: [(device: String, serial: String, server: Int)] = []
        for (number, device) in devices.enumerated() {
            registrations.append((device, "C-0000", number % 2))
            if number % 2 == 1 { registrations.append((device, "C-0001", 1 - number % 2)) }
        }
        let statuses = try await registrations.concurrentMap(maximumConcurrency: 32) { next in
            try await clients[next.server].register(
                next.device, type, next.serial, token: tokens[next.serial]!,
                pushToken: String(repeating: "9f", count: 32)
            ).status
        }
        #expect(statuses.count == 1500)
        #expect(statuses.allSatisfy { $0 == 201 })
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM devices") == "1000")
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM registrations") == "1500")
        for (number, device) in devices.enumerated() {
            let expected = number % 2 == 1 ? ["C-0000", "C-0001"] : ["C-0000"]
            let bytes = built.fileBytes(TreeLayout.deviceIndexPath(device: device, type: type))
            let listed =
                bytes.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }?["serialNumbers"]
                as? [String]
            #expect(listed == expected, "\(device)")
        }
        await first.stop()
        await second.stop()
    }

    @Test func migrateStoreCopiesSQLiteIntoPostgreSQLIdempotently() async throws {
        let database = try Self.freshDatabase()
        let folder = TemporaryDirectory("passforge-migrate")
        let sqlite = folder.file("registrations.sqlite")
        do {
            let store = try SQLiteRegistrationStore(path: sqlite)
            for device in 0..<50 {
                for serial in 0..<(device % 3 + 1) {
                    _ = try await store.register(
                        device: "mdev\(device)", pushToken: String(format: "%064x", device),
                        passTypeIdentifier: "pass.com.example.test", serialNumber: "S-\(serial)")
                }
            }
        }
        let first = try await Self.migrateStore(["--from", "sqlite:\(sqlite)", "--to", database], in: folder)
        #expect(first.status == 0, "\(first.output)")
        #expect(
            first.stdout.contains(
                "copied 50 devices and 99 registrations: 99 new, 0 already there, 0 push tokens updated"),
            "\(first.output)")
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM devices") == "50")
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM registrations") == "99")
        #expect(
            try await Self.value(database, "SELECT push_token FROM devices WHERE library_identifier = 'mdev7'")
                == String(format: "%064x", 7))
        #expect(!first.output.contains(try Self.password(database)))

        let again = try await Self.migrateStore(["--from", sqlite, "--to", database], in: folder)
        #expect(again.stdout.contains("99 registrations: 0 new, 99 already there"), "\(again.output)")
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM registrations") == "99")

        let wrong = try await Self.migrateStore(
            [
                "--from", sqlite, "--to",
                database.replacingOccurrences(of: try Self.password(database), with: "not-the-password"),
            ], in: folder)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("authentication failed"), "\(wrong.output)")
        #expect(!wrong.output.contains("not-the-password"))
    }

    static func password(_ url: String) throws -> String {
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@"),
            let colon = url[scheme.upperBound..<at.lowerBound].firstIndex(of: ":")
        else { throw HarnessError("no password in the URL") }
        return String(url[url.index(after: colon)..<at.lowerBound])
    }

    @Test func aDroppedDatabaseConnectionAnswers503AndTheServerRecovers() async throws {
        let database = try Self.freshDatabase()
        let built = try await BuiltProject.make(passCount: 1)
        built.environment["PASSFORGE_DATABASE_URL"] = database
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let type = built.type
        let token = try await built.token("C-0000")
        let pushToken = String(repeating: "8e", count: 32)
        #expect(try await client.register("before", type, "C-0000", token: token, pushToken: pushToken).status == 201)

        // Another session holds the devices table, so the next registration waits inside the database…
        // (Its pg_sleep bounds the session should the test end early: the lock goes with the session.)
        let locker = Task {
            try await runProcessWithoutBlocking(
                "psql",
                [
                    database, "-X", "-q", "-c",
                    "BEGIN; LOCK TABLE devices IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);",
                ])
        }
        #expect(
            try await eventually {
                (try await Self.value(
                    database,
                    "SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'devices' AND l.mode = 'AccessExclusiveLock' AND l.granted"
                )) == "1"
            })
        let waiting = Task { try await client.register("during", type, "C-0000", token: token, pushToken: pushToken) }
        #expect(
            try await eventually {
                (try await Self.value(
                    database,
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )) == "1"
            })
        // …and its connection drops.
        _ = try await Self.psql(
            database,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> 'psql'"
        )
        let answer = try await waiting.value
        #expect(answer.status == 503, "\(answer.status) \(answer.text)")
        #expect(answer.header("Retry-After") != nil)
        // The locking session ends (its server process would otherwise sleep on, holding the lock).
        _ = try await Self.psql(
            database,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        _ = try await locker.value

        // The pool connects again: the device's retry lands.
        #expect(
            try await eventually(timeout: 20) {
                (try await client.register("during", type, "C-0000", token: token, pushToken: pushToken).status) == 201
            })
        #expect(try await Self.value(database, "SELECT COUNT(*) FROM devices") == "2")
        await server.stop()
        #expect(!server.stderr.get().contains("Fatal error"))
    }
}
