/// The link and contact keys of a pass ("Pass" in Apple's Wallet Passes
/// documentation, iOS 18 and later). All are strings; Wallet shows them as
/// buttons in the pass's details.
package enum PassLinks {
    /// Links of the event guide: Wallet shows them on poster event tickets
    /// only. An `upcomingPassInformation` entry's `urls` holds the same keys.
    package static let eventGuideKeys = [
        "accessibilityURL", "addOnURL", "bagPolicyURL", "contactVenueEmail", "contactVenuePhoneNumber",
        "contactVenueWebsite", "directionsInformationURL", "merchandiseURL", "orderFoodURL",
        "parkingInformationURL", "purchaseParkingURL", "sellURL", "transferURL", "transitInformationURL",
    ]

    /// Links for travellers (seat changes, baggage, lounge, Wi-Fi, assistance).
    package static let travelKeys = [
        "changeSeatURL", "entertainmentURL", "managementURL", "purchaseAdditionalBaggageURL",
        "purchaseLoungeAccessURL", "purchaseWifiURL", "registerServiceAnimalURL", "reportLostBagURL",
        "requestWheelchairURL", "transitProviderEmail", "transitProviderPhoneNumber", "transitProviderWebsiteURL",
        "upgradeURL",
    ]

    /// Top-level keys that only a poster event ticket shows; on any other
    /// pass Wallet ignores them.
    package static let posterEventTicketOnlyKeys =
        eventGuideKeys + [
            "auxiliaryStoreIdentifiers", "eventLogoText", "footerBackgroundColor", "suppressHeaderDarkening",
            "useAutomaticColors",
        ]
}

/// An entry of `featuredActions`: an action Wallet offers on the pass.
package struct FeaturedAction: Sendable, Hashable, Codable {
    /// Unique among the pass's featured actions.
    package var identifier: String
    /// The kind of action.
    package var type: String
    package var url: String?

    package init(identifier: String, type: String, url: String? = nil) {
        self.identifier = identifier
        self.type = type
        self.url = url
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier, type, url
    }
}

/// An entry of `upcomingPassInformation`: one more event a ticket admits
/// to (a season ticket's next match, a festival's next day).
package struct UpcomingPassEntry: Sendable, Hashable, Codable {
    /// Unique among the pass's entries.
    package var identifier: String
    package var name: String
    /// Always `event`, the only type Wallet supports.
    package var type: String
    package var isActive: Bool?
    /// `date`, `timeZone`, `ignoreTimeComponents`, `isAllDay`, `isUnannounced`, `isUndetermined`; without it the
    /// entry shows "TBD".
    package var dateInformation: JSONValue?
    /// The event guide links, keyed like the pass's (``PassLinks/eventGuideKeys``).
    package var urls: [String: String]?
    /// `headerImage` and `venueMap`, each `{urls: [{url, sha256, scale, size}], reuseExisting}`.
    package var images: JSONValue?
    package var additionalInfoFields: [Field]?
    package var backFields: [Field]?
    package var auxiliaryStoreIdentifiers: [Int]?
    package var semantics: JSONValue?

    package init(identifier: String, name: String, type: String = "event") {
        self.identifier = identifier
        self.name = name
        self.type = type
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier, name, type, isActive, dateInformation, urls, images
        case additionalInfoFields, backFields, auxiliaryStoreIdentifiers, semantics
    }
}
