import Foundation
import SQLiteRegistrationStore
import TestSupport
import Testing

/// `passforge migrate-store` takes each store's URL from the command line, an
/// environment variable or a file, and warns where a password would show.
/// SQLite to SQLite: the sources are the same for PostgreSQL (whose copy
/// PostgresServeTests checks), and a password-holding URL needs no server to
/// be warned about.
@Suite struct MigrateStoreInputTests {
    static func migrate(
        _ arguments: [String], in folder: TemporaryDirectory,
        environment extra: [String: String] = [:]
    ) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        return try await runProcessWithoutBlocking(
            passforgeExecutable(), ["migrate-store"] + arguments,
            directory: folder.path, environment: environment)
    }

    static func seed(_ path: String, devices: Int) async throws {
        let store = try SQLiteRegistrationStore(path: path)
        for device in 0..<devices {
            _ = try await store.register(
                device: "dev\(device)", pushToken: String(format: "%064x", device),
                passTypeIdentifier: "pass.com.example.test", serialNumber: "S-1")
        }
    }

    @Test func urlsComeFromAVariableAndAFile() async throws {
        let folder = TemporaryDirectory("passforge-migrate-input")
        try await Self.seed(folder.file("from.sqlite"), devices: 4)
        let urlFile = folder.write("to-url", "\nsqlite:\(folder.file("to.sqlite"))\n\n")
        #expect(chmod(urlFile, 0o644) == 0)  // no password in it: nothing to warn about
        let result = try await Self.migrate(
            ["--from-env", "MIGRATE_FROM", "--to-file", urlFile], in: folder,
            environment: ["MIGRATE_FROM": "sqlite:\(folder.file("from.sqlite"))"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("copied 4 devices and 4 registrations: 4 new"), "\(result.output)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
    }

    @Test func aPostgreSQLURLWithItsPasswordComesFromTheEnvironment() async throws {
        let database = try PostgresTestEnvironment.freshDatabase(prefix: "migrate")
        let folder = TemporaryDirectory("passforge-migrate-input")
        try await Self.seed(folder.file("from.sqlite"), devices: 3)
        let result = try await Self.migrate(
            ["--from", "from.sqlite", "--to-env", "PASSFORGE_MIGRATE_TO"], in: folder,
            environment: ["PASSFORGE_MIGRATE_TO": database])
        #expect(
            result.status == 0 && result.stdout.contains("copied 3 devices and 3 registrations: 3 new"),
            "\(result.output)")
        #expect(!result.stderr.contains("warning:"), "\(result.stderr)")
        #expect(try await PostgresServeTests.value(database, "SELECT COUNT(*) FROM registrations") == "3")
        #expect(!result.output.contains(try PostgresServeTests.password(database)))
    }

    @Test func eachSideNeedsExactlyOneSource() async throws {
        let folder = TemporaryDirectory("passforge-migrate-input")
        let none = try await Self.migrate(["--to", "sqlite:x.sqlite"], in: folder)
        let oneOf = "give the store to read with one of --from URL, --from-env VARIABLE or --from-file FILE"
        #expect(
            none.status != 0 && none.stderr.contains(oneOf),
            "\(none.output)")
        let both = try await Self.migrate(["--from", "a.sqlite", "--to", "b.sqlite", "--to-env", "X"], in: folder)
        #expect(both.status != 0 && both.stderr.contains("--to-file FILE (not several)"), "\(both.output)")
        let unset = try await Self.migrate(
            ["--from", "a.sqlite", "--to-env", "PASSFORGE_NO_SUCH_VARIABLE"], in: folder)
        let notSet =
            "--to-env PASSFORGE_NO_SUCH_VARIABLE: the environment variable PASSFORGE_NO_SUCH_VARIABLE "
            + "is not set"
        #expect(
            unset.status == 1 && unset.stderr.contains(notSet),
            "\(unset.output)")
        let twoLines = folder.write("two", "sqlite:a.sqlite\nsqlite:b.sqlite\n")
        let file = try await Self.migrate(["--from-file", twoLines, "--to", "b.sqlite"], in: folder)
        #expect(file.status == 1 && file.stderr.contains("must hold the store's URL on one line"), "\(file.output)")
        let help = try await Self.migrate(["--help"], in: folder)
        #expect(
            help.output.contains("--to-env") && help.output.contains("--from-file") && help.output.contains("(ps,"),
            "\(help.output)")
    }

    @Test func aPasswordOnTheCommandLineOrInAnOpenFileIsWarnedAbout() async throws {
        let folder = TemporaryDirectory("passforge-migrate-input")
        try await Self.seed(folder.file("from.sqlite"), devices: 1)
        // Nothing listens on port 9: the copy fails after the warning, which is what is looked at.
        let url = "postgres://passforge:hunter2-password@127.0.0.1:9/passforge"
        let argument = try await Self.migrate(["--from", "from.sqlite", "--to", url], in: folder)
        #expect(argument.status == 1)
        #expect(
            argument.stderr.contains("warning: --to holds a password")
                && argument.stderr.contains("--to-env VARIABLE or --to-file FILE"),
            "\(argument.stderr)")
        #expect(!argument.output.contains("hunter2"))

        let urlFile = folder.write("database-url", url + "\n")
        #expect(chmod(urlFile, 0o640) == 0)
        let open = try await Self.migrate(["--from", "from.sqlite", "--to-file", urlFile], in: folder)
        let warnings = open.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(
            warnings.count == 1 && warnings[0].contains("\(urlFile) holds a database password")
                && warnings[0].hasSuffix("chmod 600 \(urlFile)"), "\(open.stderr)")
        #expect(!open.output.contains("hunter2"))

        #expect(chmod(urlFile, 0o600) == 0)
        let closed = try await Self.migrate(["--from", "from.sqlite", "--to-file", urlFile], in: folder)
        #expect(!closed.stderr.contains("warning:"), "\(closed.stderr)")
    }
}
