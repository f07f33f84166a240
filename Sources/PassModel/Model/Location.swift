/// An entry of `locations`: where the pass becomes relevant.
public struct Location: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double
    /// Metres above sea level.
    public var altitude: Double?
    public var relevantText: String?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil, relevantText: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.relevantText = relevantText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case latitude, longitude, altitude, relevantText
    }
}
