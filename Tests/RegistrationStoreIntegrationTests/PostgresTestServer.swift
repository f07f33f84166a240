import Foundation
import Logging
import PostgresNIO
import PostgresRegistrationStore
import TestSupport
import Testing

/// Databases on the throwaway servers of scripts/with-postgres.sh
/// (`PostgresTestEnvironment`), and a look at the server's side.
enum PostgresTestServer {
    static let logger = Logger(label: "passforge.tests.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A new empty database on the server of `base` (default: the main one); its URL.
    static func freshDatabase(on base: String? = nil) async throws -> String {
        let base = try base ?? PostgresTestEnvironment.url()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await withAdmin(base) { connection in
            try await connection.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        return PostgresTestEnvironment.url(base, database: name)
    }

    /// The database of a test folder: made on first use; later stores made in
    /// the same folder open the same one (as the SQLite store opens the same file).
    static func database(for folder: TemporaryDirectory) async throws -> String {
        let marker = folder.file("postgres-database-url")
        if let data = FileManager.default.contents(atPath: marker) { return String(decoding: data, as: UTF8.self) }
        let url = try await freshDatabase()
        folder.write("postgres-database-url", url)
        return url
    }

    /// One plain connection (no pool) as the URL's user, for looking at the server's side.
    @discardableResult
    static func withAdmin<T: Sendable>(_ url: String, _ body: (PostgresConnection) async throws -> T) async throws -> T
    {
        let location = try PostgresLocation(url: url)
        guard case .tcp(let host, let port) = location.endpoint else {
            throw PostgresTestEnvironment.NotConfigured(description: "the test server URL is not TCP")
        }
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: location.user,
            password: location.password, database: location.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The database name of a URL.
    static func databaseName(_ url: String) throws -> String { try PostgresLocation(url: url).database }

    /// Runs the throwaway servers' pg_ctl (as their owner) through the tests' one async process harness.
    /// Its output goes to a file, not a pipe: a started postmaster inherits the output, and a pipe would
    /// never reach its end. So a shell points the outputs at the file, then becomes pg_ctl.
    static func pgCtl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let executable = try PostgresTestEnvironment.variable("PASSFORGE_TEST_PG_CTL")
        let log = NSTemporaryDirectory() + "/passforge-pg_ctl-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try await runProcessWithoutBlocking(
            "/bin/sh", ["-c", #"log=$1; shift; exec "$@" >"$log" 2>&1"#, "sh", log, executable] + arguments)
        return (result.status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
}

extension PostgresRowSequence {
    /// The rows decoded as one column each.
    func column<T: PostgresDecodable & Sendable>(_ type: T.Type) async throws -> [T] {
        var values: [T] = []
        for try await value in self.decode(T.self) { values.append(value) }
        return values
    }
}
