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
package struct Pass: Sendable, Hashable, Codable {
    /// Always 1.
    package var formatVersion: Int
    package var passTypeIdentifier: String
    package var serialNumber: String
    package var teamIdentifier: String
    package var organizationName: String
    /// What the pass is, for accessibility: VoiceOver reads it.
    package var description: String

    package var logoText: String?
    package var foregroundColor: RGBColor?
    package var backgroundColor: RGBColor?
    package var labelColor: RGBColor?
    package var suppressStripShine: Bool?
    package var sharingProhibited: Bool?
    /// Groups event tickets and boarding passes in Wallet; other styles may not set it.
    package var groupingIdentifier: String?

    /// Base URL of the web service that updates the pass; requires `authenticationToken`.
    package var webServiceURL: String?
    /// At least 16 characters; requires `webServiceURL`.
    package var authenticationToken: String?
    /// Requires `associatedStoreIdentifiers`.
    package var appLaunchURL: String?
    package var associatedStoreIdentifiers: [Int]?
    package var userInfo: JSONValue?

    package var relevantDate: W3CDate?
    package var relevantDates: [RelevantDate]?
    package var expirationDate: W3CDate?
    package var voided: Bool?
    package var locations: [Location]?
    package var beacons: [Beacon]?
    /// Metres; greater than 0.
    package var maxDistance: Double?

    package var barcodes: [Barcode]?
    /// The legacy single barcode, still read by old devices.
    package var barcode: Barcode?
    package var nfc: NFC?
    /// Semantic tags (`airlineCode`, `eventType`, …), kept as free JSON.
    package var semantics: JSONValue?

    package var boardingPass: PassStructure?
    package var coupon: PassStructure?
    package var eventTicket: PassStructure?
    package var generic: PassStructure?
    package var storeCard: PassStructure?
    package var posterGeneric: PassStructure?

    /// Semantic-driven layouts to try before the style (``PassStyleScheme`` values and style names).
    package var preferredStyleSchemes: [String]?
    package var stripColor: RGBColor?
    /// Poster event tickets only, as are the next four keys.
    package var footerBackgroundColor: RGBColor?
    package var suppressHeaderDarkening: Bool?
    /// Wallet derives the colours from the background image, ignoring `foregroundColor` and `labelColor`.
    package var useAutomaticColors: Bool?
    /// The text next to a poster event ticket's logo (`logoText` does not show there).
    package var eventLogoText: String?
    /// App Store IDs linked from a poster event ticket's event guide.
    package var auxiliaryStoreIdentifiers: [Int]?
    /// An SF Symbol shown as the logo.
    package var logoSymbolName: String?
    package var featuredActions: [FeaturedAction]?
    package var upcomingPassInformation: [UpcomingPassEntry]?

    // The link keys (``PassLinks``): event guide links first, then travel links.
    package var accessibilityURL: String?
    package var addOnURL: String?
    package var bagPolicyURL: String?
    package var contactVenueEmail: String?
    package var contactVenuePhoneNumber: String?
    package var contactVenueWebsite: String?
    package var directionsInformationURL: String?
    package var merchandiseURL: String?
    package var orderFoodURL: String?
    package var parkingInformationURL: String?
    package var purchaseParkingURL: String?
    package var sellURL: String?
    package var transferURL: String?
    package var transitInformationURL: String?
    package var changeSeatURL: String?
    package var entertainmentURL: String?
    package var managementURL: String?
    package var purchaseAdditionalBaggageURL: String?
    package var purchaseLoungeAccessURL: String?
    package var purchaseWifiURL: String?
    package var registerServiceAnimalURL: String?
    package var reportLostBagURL: String?
    package var requestWheelchairURL: String?
    package var transitProviderEmail: String?
    package var transitProviderPhoneNumber: String?
    package var transitProviderWebsiteURL: String?
    package var upgradeURL: String?

    /// Top-level keys Apple does not define, passed through as they are.
    package var additionalProperties = JSONObject()

    /// A pass of one style, with the six required keys and `formatVersion` 1.
    package init(
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
    package init(json: JSONValue) throws {
        self = try JSONValueDecoder().decode(Pass.self, from: json)
        if case .object(let object) = json {
            let known = Set(CodingKeys.allCases.map(\.rawValue))
            for (key, value) in object where !known.contains(key) { additionalProperties[key] = value }
        }
    }

    /// The pass as a pass.json tree: known keys in a fixed order, then
    /// ``additionalProperties``.
    package var json: JSONValue {
        // Every member is a string, a number that fits in Int, a boolean, a
        // JSONValue or a composition of these, so encoding cannot fail.
        guard case .object(var object) = try! JSONValueEncoder().encode(self) else { return .object(JSONObject()) }
        for (key, value) in additionalProperties where object[key] == nil { object[key] = value }
        return .object(object)
    }

    /// The style: the first style key present (a valid pass has exactly one).
    package var style: PassStyle? { PassStyle.allCases.first { self[$0] != nil } }

    /// The fields of the pass's style.
    package var structure: PassStructure? { style.flatMap { self[$0] } }

    /// The structure under one style key.
    package subscript(style: PassStyle) -> PassStructure? {
        get {
            switch style {
            case .boardingPass: return boardingPass
            case .coupon: return coupon
            case .eventTicket: return eventTicket
            case .generic: return generic
            case .storeCard: return storeCard
            case .posterGeneric: return posterGeneric
            }
        }
        set {
            switch style {
            case .boardingPass: boardingPass = newValue
            case .coupon: coupon = newValue
            case .eventTicket: eventTicket = newValue
            case .generic: generic = newValue
            case .storeCard: storeCard = newValue
            case .posterGeneric: posterGeneric = newValue
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
        case boardingPass, coupon, eventTicket, generic, storeCard, posterGeneric
        case preferredStyleSchemes, stripColor, footerBackgroundColor, suppressHeaderDarkening, useAutomaticColors
        case eventLogoText, auxiliaryStoreIdentifiers, logoSymbolName, featuredActions, upcomingPassInformation
        case accessibilityURL, addOnURL, bagPolicyURL, contactVenueEmail, contactVenuePhoneNumber, contactVenueWebsite
        case directionsInformationURL, merchandiseURL, orderFoodURL, parkingInformationURL, purchaseParkingURL
        case sellURL, transferURL, transitInformationURL
        case changeSeatURL, entertainmentURL, managementURL, purchaseAdditionalBaggageURL, purchaseLoungeAccessURL
        case purchaseWifiURL, registerServiceAnimalURL, reportLostBagURL, requestWheelchairURL
        case transitProviderEmail, transitProviderPhoneNumber, transitProviderWebsiteURL, upgradeURL
    }

    /// The names of all top-level keys Apple defines.
    package static var knownKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
}
