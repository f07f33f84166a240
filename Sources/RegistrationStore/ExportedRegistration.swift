/// One registration as `RegistrationExport.exportRegistrations` reads it.
public struct ExportedRegistration: Sendable, Equatable {
    public var device: String
    public var pushToken: String
    public var passTypeIdentifier: String
    public var serialNumber: String

    public init(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) {
        self.device = device
        self.pushToken = pushToken
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}
