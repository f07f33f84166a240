/// A typed pass.json: every key of Apple's format ("Pass" in Apple's Wallet
/// Passes documentation).
///
/// Use it to read a pass that has been validated (`passforge inspect`), or
/// to build one in code. Validation works on the JSON tree instead
/// (``PassValidator``), because a typed model cannot say *where* a value of
/// the wrong type is, and a pass that does not decode has no model at all.
///
/// Decoding is strict about types and Apple's constants: an unknown
/// `textAlignment` or a `relevantDate` without a time zone makes
/// ``init(json:)`` throw. Top-level keys that Apple does not define are kept
/// in ``additionalProperties`` and written back by ``json``.
public struct Pass: Sendable, Hashable, Codable {
    /// Always 1.
    public var formatVersion: Int
    public var passTypeIdentifier: String
    public var serialNumber: String
    public var teamIdentifier: String
    public var organizationName: String
    /// What the pass is, for accessibility: VoiceOver reads it.
    public var description: String

    public var logoText: String?
    public var foregroundColor: RGBColor?
    public var backgroundColor: RGBColor?
    public var labelColor: RGBColor?
    public var suppressStripShine: Bool?
    public var sharingProhibited: Bool?
    /// Groups event tickets and boarding passes in Wallet; other styles may not set it.
    public var groupingIdentifier: String?

    /// Base URL of the web service that updates the pass; requires `authenticationToken`.
    public var webServiceURL: String?
    /// At least 16 characters; requires `webServiceURL`.
    public var authenticationToken: String?
    /// Requires `associatedStoreIdentifiers`.
    public var appLaunchURL: String?
    public var associatedStoreIdentifiers: [Int]?
    public var userInfo: JSONValue?

    public var relevantDate: W3CDate?
    public var relevantDates: [RelevantDate]?
    public var expirationDate: W3CDate?
    public var voided: Bool?
    public var locations: [Location]?
    public var beacons: [Beacon]?
    /// Metres; greater than 0.
    public var maxDistance: Double?

    public var barcodes: [Barcode]?
    /// The legacy single barcode, still read by old devices.
    public var barcode: Barcode?
    public var nfc: NFC?
    /// Semantic tags (`airlineCode`, `eventType`, …), kept as free JSON.
    public var semantics: JSONValue?

    public var boardingPass: PassStructure?
    public var coupon: PassStructure?
    public var eventTicket: PassStructure?
    public var generic: PassStructure?
    public var storeCard: PassStructure?

    /// Top-level keys Apple does not define, passed through as they are.
    public var additionalProperties = JSONObject()

    /// A pass of one style, with the six required keys and `formatVersion` 1.
    public init(
        passTypeIdentifier: String, serialNumber: String, teamIdentifier: String,
        organizationName: String, description: String,
        style: PassStyle, structure: PassStructure = PassStructure()
    ) {
        self.formatVersion = 1
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
        self.teamIdentifier = teamIdentifier
        self.organizationName = organizationName
        self.description = description
        self[style] = structure
    }

    /// Decodes a pass.json tree. Throws a `DecodingError` whose coding path
    /// names the offending key when a value has the wrong type or is not
    /// one of Apple's constants; run ``PassValidator`` first for messages
    /// meant for people.
    public init(json: JSONValue) throws {
        self = try JSONValueDecoder().decode(Pass.self, from: json)
        if case .object(let object) = json {
            let known = Set(CodingKeys.allCases.map(\.rawValue))
            for (key, value) in object where !known.contains(key) { additionalProperties[key] = value }
        }
    }

    /// The pass as a pass.json tree: known keys in a fixed order, then
    /// ``additionalProperties``.
    public var json: JSONValue {
        // Every member is a string, a number that fits in Int, a boolean, a
        // JSONValue or a composition of these, so encoding cannot fail.
        guard case .object(var object) = try! JSONValueEncoder().encode(self) else { return .object(JSONObject()) }
        for (key, value) in additionalProperties where object[key] == nil { object[key] = value }
        return .object(object)
    }

    /// The style: the first style key present (a valid pass has exactly one).
    public var style: PassStyle? { PassStyle.allCases.first { self[$0] != nil } }

    /// The fields of the pass's style.
    public var structure: PassStructure? { style.flatMap { self[$0] } }

    /// The structure under one style key.
    public subscript(style: PassStyle) -> PassStructure? {
        get {
            switch style {
            case .boardingPass: return boardingPass
            case .coupon: return coupon
            case .eventTicket: return eventTicket
            case .generic: return generic
            case .storeCard: return storeCard
            }
        }
        set {
            switch style {
            case .boardingPass: boardingPass = newValue
            case .coupon: coupon = newValue
            case .eventTicket: eventTicket = newValue
            case .generic: generic = newValue
            case .storeCard: storeCard = newValue
            }
        }
    }

    /// Every top-level key Apple defines, in the order ``json`` writes them.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case formatVersion, passTypeIdentifier, serialNumber, teamIdentifier, organizationName, description
        case logoText, foregroundColor, backgroundColor, labelColor, suppressStripShine, sharingProhibited
        case groupingIdentifier, webServiceURL, authenticationToken, appLaunchURL, associatedStoreIdentifiers
        case userInfo, relevantDate, relevantDates, expirationDate, voided, locations, beacons, maxDistance
        case barcodes, barcode, nfc, semantics
        case boardingPass, coupon, eventTicket, generic, storeCard
    }

    /// The names of all top-level keys Apple defines.
    public static var knownKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
}
