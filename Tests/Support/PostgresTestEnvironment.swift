import Foundation
import Testing

/// The throwaway PostgreSQL servers of scripts/with-postgres.sh, read from
/// its variables. Without them a PostgreSQL test fails, saying how to run
/// it, unless PASSFORGE_SKIP_POSTGRES=1 asks to skip it (Swift Testing shows
/// it as cancelled).
public enum PostgresTestEnvironment {
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// The value of one of scripts/with-postgres.sh's variables; cancels the
    /// test when it is missing and PASSFORGE_SKIP_POSTGRES=1, fails it otherwise.
    public static func variable(_ name: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[name], !value.isEmpty { return value }
        if environment["PASSFORGE_SKIP_POSTGRES"] == "1" {
            _ = announceSkipping
            try Test.cancel("skipped: PASSFORGE_SKIP_POSTGRES=1 and \(name) is not set")
        }
        throw NotConfigured(
            description: """
                \(name) is not set, so this PostgreSQL test cannot run. Run the tests through \
                scripts/with-postgres.sh (e.g. scripts/with-postgres.sh swift test; make test does), or set \
                PASSFORGE_SKIP_POSTGRES=1 to skip the PostgreSQL cases on purpose.
                """)
    }

    /// Once per run, on standard error: Swift Testing does not print the
    /// cancelled cases of a parameterized test.
    private static let announceSkipping: Void = {
        FileHandle.standardError.write(
            Data(
                """
                note: PASSFORGE_SKIP_POSTGRES=1: every PostgreSQL test and test case is skipped (shown as cancelled); \
                run scripts/with-postgres.sh swift test to run them.\n
                """.utf8))
    }()

    /// The main server (TLS available, the test user may create databases).
    public static func url() throws -> String { try variable("PASSFORGE_TEST_POSTGRES_URL") }

    /// A new, empty database on the main server, named `<prefix>_<random>`, made with psql.
    public static func freshDatabase(prefix: String) throws -> String {
        let base = try url()
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        let created = try runProcess(
            "psql", [base, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"])
        guard created.status == 0 else {
            throw NotConfigured(description: "CREATE DATABASE \(name) failed: \(created.output)")
        }
        return url(base, database: name)
    }

    /// `url` with another database (the path replaced, the query kept).
    public static func url(_ url: String, database: String) -> String {
        let schemeEnd = url.range(of: "://")!
        let query = url.firstIndex(of: "?") ?? url.endIndex
        let authorityEnd =
            url[schemeEnd.upperBound..<query].lastIndex(of: "@").flatMap { at in
                url[at..<query].firstIndex(of: "/")
            } ?? url[schemeEnd.upperBound..<query].firstIndex(of: "/") ?? query
        return String(url[..<authorityEnd]) + "/" + database + String(url[query...])
    }

    /// `url` with its query replaced.
    public static func url(_ url: String, query: String) -> String {
        let base = url.firstIndex(of: "?").map { String(url[..<$0]) } ?? url
        return query.isEmpty ? base : base + "?" + query
    }
}
