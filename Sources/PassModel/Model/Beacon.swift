/// An entry of `beacons`: an iBeacon near which the pass becomes relevant.
package struct Beacon: Sendable, Hashable, Codable {
    package var proximityUUID: String
    package var major: UInt16?
    package var minor: UInt16?
    package var relevantText: String?

    package init(proximityUUID: String, major: UInt16? = nil, minor: UInt16? = nil, relevantText: String? = nil) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.relevantText = relevantText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case proximityUUID, major, minor, relevantText
    }
}
