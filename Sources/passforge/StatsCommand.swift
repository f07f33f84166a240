import ArgumentParser
import ConcurrencySupport
import Foundation
import RegistrationStore
import WalletTree

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract:
            "What reached a phone: per pass type, template and offer, passes issued, on a device now, ever added.",
        discussion: """
            Reads the last build (issued passes, their templates and offers) and the registration store that \
            `passforge serve` uses (PASSFORGE_DATABASE_URL). A pass is on a device when a device registered it for \
            updates and has not unregistered it; registrations and removals per day are counted by passforge serve \
            from the version that has this command on. Counts only: no device identifier or push token is printed.

            Examples:
              passforge stats
              PASSFORGE_DATABASE_URL=postgres://passforge@db/passforge passforge stats --json
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(help: "Days of registrations and removals to print in text (default 14; JSON has every day).")
    var days = 14

    func run() async throws {
        let output = project.output
        let index = try Console.runReportingErrors { try PublishedIndex.load(from: output) }
        var onDevices: [PassDeviceCount] = []
        var events: [RegistrationDayCount] = []
        // The process's one pool for the store's blocking work.
        let pool = BlockingPool(threadCount: 1)
        if let (store, _) = try await StoreOpening.open(project: project.project, onlyIfPresent: true, pool: pool) {
            guard let counting = store as? any InstallStatisticsStore else {
                Console.error("error: this registration store keeps no install counts")
                throw ExitCode.failure
            }
            onDevices = try await counting.passesOnDevices()
            events = try await counting.registrationEvents()
        } else if !json {
            Console.error(
                "no registration store yet (\(StoreLocation.environmentVariable) or \(StoreOpening.defaultSQLitePath(of: project.project))): "
                    + "no pass has reached a device")
        }
        let report = InstallReport(index: index, onDevices: onDevices, events: events)
        if json {
            FileHandle.standardOutput.write(Data(report.json.utf8))
            return
        }
        FileHandle.standardOutput.write(Data(Self.text(report, days: days).utf8))
    }

    static func text(_ report: InstallReport, days: Int) -> String {
        guard !report.groups.isEmpty else { return "no passes in the last build\n" }
        var text = "pass type\ttemplate\toffer\tissued\ton devices\tever added\tshare ever added\n"
        for group in report.groups.keys.sorted() {
            let counts = report.groups[group]!
            text +=
                "\(group.passTypeIdentifier)\t\(group.template)\t\(group.offer.isEmpty ? "-" : group.offer)\t\(counts.issued)\t"
            text +=
                "\(counts.onDevices)\t\(counts.everAdded)\t\(String(format: "%.1f %%", counts.shareEverAdded * 100))\n"
        }
        var perDay: [String: (added: Int, removed: Int)] = [:]
        for counts in report.groups.values {
            for (day, value) in counts.days {
                perDay[day] = ((perDay[day]?.added ?? 0) + value.added, (perDay[day]?.removed ?? 0) + value.removed)
            }
        }
        if !perDay.isEmpty {
            text += "\nday\tregistrations\tremovals\n"
            for day in perDay.keys.sorted().suffix(max(0, days)) {
                text += "\(day)\t\(perDay[day]!.added)\t\(perDay[day]!.removed)\n"
            }
        }
        return text
    }
}
