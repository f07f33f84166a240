// The smaller objects of a pass.json: barcodes, locations, beacons,
// relevant dates and NFC.

/// An entry of `barcodes` (or the legacy single `barcode`).
public struct Barcode: Sendable, Hashable, Codable {
    public var format: BarcodeFormat
    public var message: String
    /// The IANA character set of `message` when it is turned into bytes, usually `iso-8859-1`.
    public var messageEncoding: String
    /// Text shown near the barcode, e.g. the code in readable form.
    public var altText: String?

    public init(format: BarcodeFormat, message: String, messageEncoding: String = "iso-8859-1", altText: String? = nil) {
        self.format = format
        self.message = message
        self.messageEncoding = messageEncoding
        self.altText = altText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, message, messageEncoding, altText
    }
}

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

/// An entry of `relevantDates` (iOS 18): either one moment (`date`) or an
/// interval of at most 24 hours (`startDate` … `endDate`).
public struct RelevantDate: Sendable, Hashable, Codable {
    public var date: W3CDate?
    public var startDate: W3CDate?
    public var endDate: W3CDate?

    public init(date: W3CDate) {
        self.date = date
    }

    public init(startDate: W3CDate, endDate: W3CDate) {
        self.startDate = startDate
        self.endDate = endDate
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case date, startDate, endDate
    }
}

/// The `nfc` object: what an NFC reader receives (Value Added Services).
public struct NFC: Sendable, Hashable, Codable {
    /// At most 64 bytes of UTF-8.
    public var message: String
    /// Base64 DER of an X.509 SubjectPublicKeyInfo holding a P-256 key.
    public var encryptionPublicKey: String?
    public var requiresAuthentication: Bool?

    public init(message: String, encryptionPublicKey: String? = nil, requiresAuthentication: Bool? = nil) {
        self.message = message
        self.encryptionPublicKey = encryptionPublicKey
        self.requiresAuthentication = requiresAuthentication
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case message, encryptionPublicKey, requiresAuthentication
    }
}
