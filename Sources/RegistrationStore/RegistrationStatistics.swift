/// Row counts of a registration store.
package struct RegistrationStatistics: Sendable, Equatable {
    package var devices: Int
    package var registrations: Int
    package var logEntries: Int

    package init(devices: Int, registrations: Int, logEntries: Int) {
        self.devices = devices
        self.registrations = registrations
        self.logEntries = logEntries
    }
}
