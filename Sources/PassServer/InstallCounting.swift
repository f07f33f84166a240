import Foundation
import Logging
import RegistrationStore
import WalletTree

extension PassWebService {
    /// Counts a registration added or removed for `passforge stats` (`InstallStatisticsStore`): the pass and the
    /// day only. After the store's own commit: a server stopped in between misses one count, never a registration.
    func countInstall(_ outcome: RegistrationOutcome, type: String, serial: String) async {
        guard outcome.changesIndex, let counting = store as? any InstallStatisticsStore else { return }
        do {
            try await counting.recordRegistrationEvent(
                passTypeIdentifier: type, serialNumber: serial, added: outcome == .created, at: Date())
        } catch {
            logger.warning("registration counts for stats not updated: \(error)")
        }
    }
}

extension ServerMetrics {
    /// The counts of `passforge stats` as gauges, per pass type, template and offer: passes issued, on at least
    /// one device now, ever added; no device or token. (The per-day counts stay in `passforge stats`: a gauge per
    /// day would grow without end.)
    func recordInstalls(store: any RegistrationStore, tree: PublishedTree.Snapshot) async {
        guard let counting = store as? any InstallStatisticsStore,
            let onDevices = try? await counting.passesOnDevices(),
            let events = try? await counting.registrationEvents()
        else { return }
        let report = InstallReport(items: tree.items.values.lazy.map(\.record), onDevices: onDevices, events: events)
        for (group, counts) in report.groups {
            let labels = [
                ("pass_type", group.passTypeIdentifier), ("template", group.template), ("offer", group.offer),
            ]
            gauge("passforge_passes_issued", labels, Double(counts.issued))
            gauge("passforge_passes_on_devices", labels, Double(counts.onDevices))
            gauge("passforge_passes_ever_added", labels, Double(counts.everAdded))
        }
    }
}
