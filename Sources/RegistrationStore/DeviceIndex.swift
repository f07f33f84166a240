/// The serial numbers of one pass type registered on one device.
package struct DeviceIndex: Sendable, Equatable, Hashable {
    package var device: String
    package var passTypeIdentifier: String
    /// Sorted; empty when the device holds no pass of this type.
    package var serialNumbers: [String]

    package init(device: String, passTypeIdentifier: String, serialNumbers: [String]) {
        self.device = device
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumbers = serialNumbers
    }
}
