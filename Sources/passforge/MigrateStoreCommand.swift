import ArgumentParser
import AtomicFiles
import ConcurrencySupport
import Foundation
import RegistrationStore

struct MigrateStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-store",
        abstract: "Copy every device and registration from one registration store into another.",
        discussion: """
            For moving from the embedded SQLite file to PostgreSQL when one server becomes several. Idempotent: registrations the destination has already are left alone, so a copy that stopped half-way is finished by running it again. Push tokens come with their devices; pending pushes and device logs stay behind (the next push run queues what changed). Stop the servers writing to the source first, or run it again after switching them over.

            Each store is given one of three ways: --from URL (--to URL) on the command line, \
            --from-env VARIABLE (--to-env) to read the URL from an environment variable, or \
            --from-file FILE (--to-file) to read it from a file's one line. A password on the command \
            line is seen by every user of the machine (ps, /proc/PID/cmdline) and stays in the shell's \
            history: give a URL that holds one with --to-env or --to-file (passforge warns otherwise). \
            A file that holds a password should be readable by its owner alone (passforge warns otherwise).

            Examples:
              passforge migrate-store --from sqlite:state/registrations.sqlite --to-env PASSFORGE_DATABASE_URL
              passforge migrate-store --from /var/lib/passforge/registrations.sqlite --to-file /etc/passforge/database-url
              read -rs PASSFORGE_MIGRATE_TO && export PASSFORGE_MIGRATE_TO   # paste the URL; it is not shown
              passforge migrate-store --from sqlite:state/registrations.sqlite --to-env PASSFORGE_MIGRATE_TO
              passforge migrate-store --from state/registrations.sqlite --to postgres://passforge@db.internal/passforge
            """
    )

    @Option(help: ArgumentHelp("The store to read: sqlite:PATH, a file path, or postgres://….", valueName: "url"))
    var from: String?

    @Option(
        name: .customLong("from-env"),
        help: ArgumentHelp("An environment variable that holds the store to read.", valueName: "variable"))
    var fromVariable: String?

    @Option(
        name: .customLong("from-file"),
        help: ArgumentHelp("A file that holds the store to read, on one line.", valueName: "file"))
    var fromFile: String?

    @Option(help: ArgumentHelp("The store to write: sqlite:PATH, a file path, or postgres://….", valueName: "url"))
    var to: String?

    @Option(
        name: .customLong("to-env"),
        help: ArgumentHelp("An environment variable that holds the store to write.", valueName: "variable"))
    var toVariable: String?

    @Option(
        name: .customLong("to-file"),
        help: ArgumentHelp("A file that holds the store to write, on one line.", valueName: "file"))
    var toFile: String?

    private var source: StoreURLSource? {
        StoreURLSource(side: "from", url: from, variable: fromVariable, file: fromFile)
    }
    private var destinationSource: StoreURLSource? {
        StoreURLSource(side: "to", url: to, variable: toVariable, file: toFile)
    }

    func validate() throws {
        for (side, given) in [("from", [from, fromVariable, fromFile]), ("to", [to, toVariable, toFile])] {
            let count = given.compactMap { $0 }.count
            guard count == 1 else {
                let what = side == "from" ? "the store to read" : "the store to write"
                throw ValidationError(
                    "give \(what) with one of --\(side) URL, --\(side)-env VARIABLE or "
                        + "--\(side)-file FILE" + (count > 1 ? " (not several)" : ""))
            }
        }
    }

    func run() async throws {
        guard let reading = self.source, let writing = destinationSource else { throw ExitCode.failure }
        let (from, to) = (try reading.read(), try writing.read())
        guard (try? StoreLocation(from)) != (try? StoreLocation(to)) else {
            Console.error("error: \(reading.label) and \(writing.label) name the same store")
            throw ExitCode.failure
        }
        // The process's one pool, for both stores' blocking work.
        let pool = BlockingPool()
        guard let (source, sourceName) = try await StoreOpening.open(from, onlyIfPresent: true, pool: pool) else {
            Console.error("error: \(reading.label): there is no such SQLite file")
            throw ExitCode.failure
        }
        guard let (destination, destinationName) = try await StoreOpening.open(to, pool: pool) else {
            throw ExitCode.failure
        }
        Console.error("copying registrations from \(sourceName) to \(destinationName)…")
        let report: StoreMigration.Report
        do {
            report = try await StoreMigration(from: source, to: destination).run { report in
                Console.progressLine("  \(report.registrations) registrations copied", final: false)
            }
        } catch {
            Console.error(
                "\nerror: the copy stopped: \(error); run the command again to finish it (what was copied stays)")
            throw ExitCode.failure
        }
        if Console.isTerminal { Console.error("") }
        Console.print(
            "copied \(report.devices) device\(report.devices == 1 ? "" : "s") and \(report.registrations) registration\(report.registrations == 1 ? "" : "s"): \(report.created) new, \(report.alreadyPresent) already there, \(report.pushTokensUpdated) push token\(report.pushTokensUpdated == 1 ? "" : "s") updated"
        )
    }
}

/// Where one side of `migrate-store` takes its store's URL from: the command
/// line, an environment variable, or a file.
struct StoreURLSource {
    enum Origin {
        case argument(String)
        case variable(String)
        case file(String)
    }

    /// "from" or "to".
    var side: String
    var origin: Origin

    init?(side: String, url: String?, variable: String?, file: String?) {
        self.side = side
        if let url {
            origin = .argument(url)
        } else if let variable {
            origin = .variable(variable)
        } else if let file {
            origin = .file(file)
        } else {
            return nil
        }
    }

    /// The option as the user wrote it, for messages (never the URL: it may hold a password).
    var label: String {
        switch origin {
        case .argument: "--\(side)"
        case .variable(let name): "--\(side)-env \(name)"
        case .file(let path): "--\(side)-file \(path)"
        }
    }

    /// The URL; warns when a password stands on the command line or in a file others may read.
    func read() throws -> String {
        switch origin {
        case .argument(let url):
            if Self.holdsPassword(url) {
                Console.error(
                    "warning: --\(side) holds a password, which every user of this machine can see while "
                        + "the copy runs (ps, /proc) and which stays in the shell's history; give it with "
                        + "--\(side)-env VARIABLE or --\(side)-file FILE instead")
            }
            return url
        case .variable(let name):
            guard let value = ProcessInfo.processInfo.environment[name]?.trimmingWhitespace(), !value.isEmpty else {
                Console.error(
                    "error: \(label): the environment variable \(name) is not set; "
                        + "set it to the store's URL (sqlite:PATH, a file path or postgres://…)")
                throw ExitCode.failure
            }
            return value
        case .file(let path):
            return try readFile(path)
        }
    }

    private func readFile(_ path: String) throws -> String {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFileSystem.readFile(path, limit: 64 * 1024)
        } catch {
            Console.error(
                "error: \(label): cannot read it: \(error.reason); "
                    + "write the store's URL into it, on one line")
            throw ExitCode.failure
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        guard lines.count == 1, let url = lines.first else {
            Console.error(
                "error: \(label): the file must hold the store's URL on one line "
                    + "(sqlite:PATH, a file path or postgres://…); it holds \(lines.count) lines")
            throw ExitCode.failure
        }
        if Self.holdsPassword(url) { SecretFile.warnIfExposed(path, holding: "a database password") }
        return url
    }

    /// True for a PostgreSQL URL with a password: `user:password@` or libpq's `password=` parameter.
    static func holdsPassword(_ url: String) -> Bool {
        guard case .postgres = try? StoreLocation(url) else { return false }
        return StoreLocation.redacted(url) != url
    }
}
