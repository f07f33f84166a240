/// One registration as `RegistrationExport.exportRegistrations` reads it.
package struct ExportedRegistration: Sendable, Equatable {
    package var device: String
    package var pushToken: String
    package var passTypeIdentifier: String
    package var serialNumber: String

    package init(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) {
        self.device = device
        self.pushToken = pushToken
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}
