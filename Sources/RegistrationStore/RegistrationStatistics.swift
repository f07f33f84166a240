/// Row counts of a registration store.
public struct RegistrationStatistics: Sendable, Equatable {
    public var devices: Int
    public var registrations: Int
    public var logEntries: Int

    public init(devices: Int, registrations: Int, logEntries: Int) {
        self.devices = devices
        self.registrations = registrations
        self.logEntries = logEntries
    }
}
