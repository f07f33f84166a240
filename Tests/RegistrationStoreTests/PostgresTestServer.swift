import Foundation
import Logging
import PostgresNIO
import RegistrationStore
import TestSupport
import Testing

/// The throwaway servers of scripts/with-postgres.sh, read from its variables.
/// Without them a PostgreSQL test fails, saying how to run it, unless
/// PASSFORGE_SKIP_POSTGRES=1 asks to skip it (Swift Testing shows it as cancelled).
enum PostgresTestServer {
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String
    }

    static let logger = Logger(label: "passforge.tests.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    static func variable(_ name: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[name], !value.isEmpty { return value }
        if environment["PASSFORGE_SKIP_POSTGRES"] == "1" {
            _ = announceSkipping
            try Test.cancel("skipped: PASSFORGE_SKIP_POSTGRES=1 and \(name) is not set")
        }
        throw NotConfigured(description: """
            \(name) is not set, so this PostgreSQL test cannot run. Run the tests through \
            scripts/with-postgres.sh (e.g. scripts/with-postgres.sh swift test), or set \
            PASSFORGE_SKIP_POSTGRES=1 to skip the PostgreSQL cases on purpose.
            """)
    }

    /// Once per run, on standard error: Swift Testing does not print the
    /// cancelled cases of a parameterized test.
    private static let announceSkipping: Void = {
        FileHandle.standardError.write(Data("""
            note: PASSFORGE_SKIP_POSTGRES=1: every PostgreSQL test and test case is skipped (shown as cancelled); \
            run scripts/with-postgres.sh swift test to run them.\n
            """.utf8))
    }()

    /// The main server (TLS available, the test user may create databases).
    static func url() throws -> String { try variable("PASSFORGE_TEST_POSTGRES_URL") }

    /// `url` with another database (the path replaced, the query kept).
    static func url(_ url: String, database: String) -> String {
        let schemeEnd = url.range(of: "://")!
        let query = url.firstIndex(of: "?") ?? url.endIndex
        let authorityEnd = url[schemeEnd.upperBound..<query].lastIndex(of: "@").flatMap { at in
            url[at..<query].firstIndex(of: "/")
        } ?? url[schemeEnd.upperBound..<query].firstIndex(of: "/") ?? query
        return String(url[..<authorityEnd]) + "/" + database + String(url[query...])
    }

    /// `url` with its query replaced.
    static func url(_ url: String, query: String) -> String {
        let base = url.firstIndex(of: "?").map { String(url[..<$0]) } ?? url
        return query.isEmpty ? base : base + "?" + query
    }

    /// A new empty database on the server of `base` (default: the main one); its URL.
    static func freshDatabase(on base: String? = nil) async throws -> String {
        let base = try base ?? url()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await withAdmin(base) { connection in
            try await connection.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        return url(base, database: name)
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
    static func withAdmin<T: Sendable>(_ url: String, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let location = try PostgresLocation(url: url)
        guard case .tcp(let host, let port) = location.endpoint else { throw NotConfigured(description: "the test server URL is not TCP") }
        let configuration = PostgresConnection.Configuration(host: host, port: port, username: location.user,
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

    /// Runs the throwaway servers' pg_ctl (as their owner), off the
    /// cooperative threads. Its output goes to a file, not a pipe: a started
    /// postmaster inherits the output, and a pipe would never reach its end.
    static func pgCtl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let executable = try variable("PASSFORGE_TEST_PG_CTL")
        let log = NSTemporaryDirectory() + "/passforge-pg_ctl-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: executable)
                    process.arguments = arguments
                    process.standardInput = FileHandle.nullDevice
                    process.standardOutput = output
                    process.standardError = output
                    try process.run()
                    process.waitUntilExit()
                    try? output.close()
                    continuation.resume(returning: process.terminationStatus)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
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
