import ArgumentParser
import Foundation
import RegistrationStore

struct MigrateStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-store",
        abstract: "Copy every device and registration from one registration store into another.",
        discussion: """
        For moving from the embedded SQLite file to PostgreSQL when one server becomes several. Idempotent: registrations the destination has already are left alone, so a copy that stopped half-way is finished by running it again. Push tokens come with their devices; pending pushes and device logs stay behind (the next push run queues what changed). Stop the servers writing to the source first, or run it again after switching them over.

        Examples:
          passforge migrate-store --from sqlite:state/registrations.sqlite --to postgres://passforge@db.internal/passforge
          passforge migrate-store --from state/registrations.sqlite --to "$PASSFORGE_DATABASE_URL"
        """
    )

    @Option(help: ArgumentHelp("The store to read: sqlite:PATH, a file path, or postgres://….", valueName: "url"))
    var from: String

    @Option(help: ArgumentHelp("The store to write: sqlite:PATH, a file path, or postgres://….", valueName: "url"))
    var to: String

    func validate() throws {
        guard (try? StoreLocation(from)) != (try? StoreLocation(to)) else {
            throw ValidationError("--from and --to name the same store")
        }
    }

    func run() async throws {
        guard let (source, sourceName) = try await StoreOpening.open(from, onlyIfPresent: true) else {
            Console.error("error: --from \(from): there is no such SQLite file")
            throw ExitCode.failure
        }
        guard let (destination, destinationName) = try await StoreOpening.open(to) else { throw ExitCode.failure }
        Console.error("copying registrations from \(sourceName) to \(destinationName)…")
        let report: StoreMigration.Report
        do {
            report = try await StoreMigration(from: source, to: destination).run { report in
                Console.progressLine("  \(report.registrations) registrations copied", final: false)
            }
        } catch {
            Console.error("\nerror: the copy stopped: \(error); run the command again to finish it (what was copied stays)")
            throw ExitCode.failure
        }
        if Console.isTerminal { Console.error("") }
        Console.print("copied \(report.devices) device\(report.devices == 1 ? "" : "s") and \(report.registrations) registration\(report.registrations == 1 ? "" : "s"): \(report.created) new, \(report.alreadyPresent) already there, \(report.pushTokensUpdated) push token\(report.pushTokensUpdated == 1 ? "" : "s") updated")
    }
}
