import ConcurrencySupport

/// Copies every device and registration of one store into another
/// (`passforge migrate-store`): SQLite to PostgreSQL when one server
/// becomes several. Idempotent: what the destination has already is left as
/// it is, so a copy that stopped half-way is finished by running it again.
/// Push tokens come along with their devices; the push queue and device logs
/// do not (the next push run queues what changed).
package struct StoreMigration: Sendable {
    package struct Report: Sendable, Equatable {
        /// Registrations read from the source.
        package var registrations = 0
        /// Devices seen in the source.
        package var devices = 0
        /// Registrations the destination did not have.
        package var created = 0
        /// Registrations the destination had already.
        package var alreadyPresent = 0
        /// Devices whose push token the source's replaced.
        package var pushTokensUpdated = 0

        package init() {}
    }

    package let source: any RegistrationExport
    package let destination: any RegistrationStore
    package var pageSize = 1_000
    /// Registrations written at once.
    package var concurrency = 16

    package init(from source: any RegistrationExport, to destination: any RegistrationStore) {
        self.source = source
        self.destination = destination
    }

    package func run(progress: @Sendable (Report) -> Void = { _ in }) async throws -> Report {
        var report = Report()
        var after: ExportedRegistration?
        var lastDevice: String?
        while true {
            let page = try await source.exportRegistrations(after: after, limit: pageSize)
            guard let last = page.last else { break }
            for registration in page where registration.device != lastDevice {
                report.devices += 1
                lastDevice = registration.device
            }
            let outcomes = try await write(page)
            report.registrations += page.count
            for outcome in outcomes {
                switch outcome {
                case .created: report.created += 1
                case .pushTokenReplaced:
                    report.alreadyPresent += 1
                    report.pushTokensUpdated += 1
                default: report.alreadyPresent += 1
                }
            }
            progress(report)
            after = last
        }
        return report
    }

    private func write(_ page: [ExportedRegistration]) async throws -> [RegistrationOutcome] {
        let destination = self.destination
        return try await page.concurrentMap(maximumConcurrency: concurrency) { registration in
            try await destination.register(
                device: registration.device, pushToken: registration.pushToken,
                passTypeIdentifier: registration.passTypeIdentifier,
                serialNumber: registration.serialNumber
            ).outcome
        }
    }
}
