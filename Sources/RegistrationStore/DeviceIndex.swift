/// The serial numbers of one pass type registered on one device.
public struct DeviceIndex: Sendable, Equatable, Hashable {
    public var device: String
    public var passTypeIdentifier: String
    /// Sorted; empty when the device holds no pass of this type.
    public var serialNumbers: [String]

    public init(device: String, passTypeIdentifier: String, serialNumbers: [String]) {
        self.device = device
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumbers = serialNumbers
    }
}
