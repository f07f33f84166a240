/// A pass, by its identity.
public struct PassReference: Sendable, Hashable {
    public var passTypeIdentifier: String
    public var serialNumber: String

    public init(passTypeIdentifier: String, serialNumber: String) {
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}
