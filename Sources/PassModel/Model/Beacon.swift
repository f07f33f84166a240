/// An entry of `beacons`: an iBeacon near which the pass becomes relevant.
public struct Beacon: Sendable, Hashable, Codable {
    public var proximityUUID: String
    public var major: UInt16?
    public var minor: UInt16?
    public var relevantText: String?

    public init(proximityUUID: String, major: UInt16? = nil, minor: UInt16? = nil, relevantText: String? = nil) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.relevantText = relevantText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case proximityUUID, major, minor, relevantText
    }
}
