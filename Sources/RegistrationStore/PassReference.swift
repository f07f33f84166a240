/// A pass, by its identity.
package struct PassReference: Sendable, Hashable {
    package var passTypeIdentifier: String
    package var serialNumber: String

    package init(passTypeIdentifier: String, serialNumber: String) {
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}
