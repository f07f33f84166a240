package import Foundation

/// Counts of what reached a phone, per pass: never a device identifier or a push token. `passforge stats` and
/// `/metrics` group them by pass type, template and offer with the build state (`InstallReport`).
///
/// A registration is Apple's only signal that a pass is in Wallet with updates on ("Adding a Web Service to
/// Update Passes"); an unregistration is counted as a removal, which Apple does not say is a deletion (the
/// device may have turned updates off). A pass added where the device never reached the service is not seen.
package protocol InstallStatisticsStore: Sendable {
    /// Counts one registration added (`added`) or removed, on the UTC day of `date`. The store keeps only these
    /// counts per day and pass (the registrations table keeps no history of removals).
    func recordRegistrationEvent(passTypeIdentifier: String, serialNumber: String, added: Bool, at date: Date)
        async throws
    /// Every pass with at least one registration now, with how many devices hold it.
    func passesOnDevices() async throws -> [PassDeviceCount]
    /// The counts of `recordRegistrationEvent`, by day and pass.
    func registrationEvents() async throws -> [RegistrationDayCount]
}

package struct PassDeviceCount: Sendable, Equatable {
    package var passTypeIdentifier: String
    package var serialNumber: String
    package var devices: Int
    package init(passTypeIdentifier: String, serialNumber: String, devices: Int) {
        (self.passTypeIdentifier, self.serialNumber, self.devices) = (passTypeIdentifier, serialNumber, devices)
    }
}

package struct RegistrationDayCount: Sendable, Equatable {
    /// `YYYY-MM-DD`, UTC.
    package var day: String
    package var passTypeIdentifier: String
    package var serialNumber: String
    package var added: Int
    package var removed: Int
    package init(day: String, passTypeIdentifier: String, serialNumber: String, added: Int, removed: Int) {
        (self.day, self.passTypeIdentifier, self.serialNumber, self.added, self.removed) = (
            day, passTypeIdentifier, serialNumber, added, removed
        )
    }

    /// The UTC day of `date`, as the stores key their counts.
    package static func day(of date: Date) -> String {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        let civil = civilDate(daysSince1970: days)
        return String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day)
    }

    /// Howard Hinnant's days-to-civil: no calendar or formatter per registration.
    static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
