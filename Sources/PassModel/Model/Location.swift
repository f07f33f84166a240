/// An entry of `locations`: where the pass becomes relevant.
package struct Location: Sendable, Hashable, Codable {
    package var latitude: Double
    package var longitude: Double
    /// Metres above sea level.
    package var altitude: Double?
    package var relevantText: String?

    package init(latitude: Double, longitude: Double, altitude: Double? = nil, relevantText: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.relevantText = relevantText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case latitude, longitude, altitude, relevantText
    }
}
