/// Every semantic tag ("SemanticTags" in Apple's Wallet Passes
/// documentation, with the tags added for poster event tickets and semantic
/// boarding passes): its JSON type and the passes it is meant for.
package enum SemanticTags {
    /// The JSON shape of a tag's value.
    package enum Kind: Sendable, Hashable {
        case string, date, boolean, integer
        case stringArray
        /// `{latitude, longitude, altitude?, relevantText?}`: "SemanticTagType.Location".
        case location
        /// `{amount, currencyCode}`: "SemanticTagType.CurrencyAmount".
        case currencyAmount
        /// `{namePrefix, givenName, …}`: "SemanticTagType.PersonNameComponents".
        case personName
        /// `{date, timeZone, ignoreTimeComponents, unannounced, undetermined}`.
        case eventDateInfo
        /// An array of "SemanticTagType.Seat".
        case seats
        /// An array of "SemanticTagType.WifiNetwork".
        case wifiNetworks
        /// One of ``EventType``.
        case eventType
    }

    /// The passes a tag is meant for, as Apple's documentation words it:
    /// "use this key for …" (``isExclusive`` false) or "use this key only
    /// for …" (true).
    package enum Scope: Sendable, Hashable {
        case anyPass
        case eventTicket
        /// Sports event tickets: still event tickets, so only the style is checked.
        case sportsEventTicket
        case boardingPass
        /// Airline boarding passes only: only the style is checked, not the transit type.
        case airlineBoardingPass
        /// Train and other rail boarding passes only, checked like ``airlineBoardingPass``.
        case railBoardingPass
        case eventTicketOrBoardingPass
        case storeCard

        /// Whether Apple says "only": then a pass of another style should not carry the tag.
        package var isExclusive: Bool {
            self == .sportsEventTicket || self == .airlineBoardingPass || self == .railBoardingPass
        }

        package func includes(_ style: PassStyle) -> Bool {
            switch self {
            case .anyPass: return true
            case .eventTicket, .sportsEventTicket: return style == .eventTicket
            case .boardingPass, .airlineBoardingPass, .railBoardingPass: return style == .boardingPass
            case .eventTicketOrBoardingPass: return style == .eventTicket || style == .boardingPass
            case .storeCard: return style == .storeCard
            }
        }

        package var description: String {
            switch self {
            case .anyPass: return "any pass"
            case .eventTicket: return "event tickets"
            case .sportsEventTicket: return "sports event tickets"
            case .boardingPass: return "boarding passes"
            case .airlineBoardingPass: return "airline boarding passes"
            case .railBoardingPass: return "train and other rail boarding passes"
            case .eventTicketOrBoardingPass: return "event tickets and boarding passes"
            case .storeCard: return "store cards"
            }
        }
    }

    package struct Tag: Sendable, Hashable {
        package var kind: Kind
        package var scope: Scope
    }

    /// Every tag by name.
    package static let all: [String: Tag] = {
        var tags: [String: Tag] = [:]
        func add(_ names: [String], _ kind: Kind, _ scope: Scope) {
            for name in names { tags[name] = Tag(kind: kind, scope: scope) }
        }
        // Any event ticket.
        add(
            [
                "admissionLevel", "admissionLevelAbbreviation", "additionalTicketAttributes", "attendeeName",
                "entranceDescription", "eventName", "genre", "venueEntrance", "venueEntranceDoor", "venueEntranceGate",
                "venueEntrancePortal", "venueName", "venuePhoneNumber", "venueRegionName", "venueRoom",
            ], .string, .eventTicket)
        add(
            [
                "eventStartDate", "eventEndDate", "venueBoxOfficeOpenDate", "venueCloseDate", "venueDoorsOpenDate",
                "venueFanZoneOpenDate", "venueGatesOpenDate", "venueOpenDate", "venueParkingLotsOpenDate",
            ], .date, .eventTicket)
        add(["eventType"], .eventType, .eventTicket)
        add(["eventStartDateInfo"], .eventDateInfo, .eventTicket)
        add(["tailgatingAllowed"], .boolean, .eventTicket)
        add(["venueLocation"], .location, .eventTicket)
        add(["albumIDs", "artistIDs", "playlistIDs", "performerNames"], .stringArray, .eventTicket)
        // Sports event tickets.
        add(
            [
                "awayTeamAbbreviation", "awayTeamLocation", "awayTeamName", "homeTeamAbbreviation", "homeTeamLocation",
                "homeTeamName", "leagueAbbreviation", "leagueName", "sportName",
            ], .string, .sportsEventTicket)
        // Boarding passes.
        var places: [String] = []
        for prefix in ["departure", "destination"] {
            for suffix in [
                "AirportCode", "AirportName", "AirportTimeZone", "CityName", "Gate", "LocationDescription",
                "Platform", "StationName", "Terminal",
            ] { places.append(prefix + suffix) }
        }
        add(
            places + [
                "airlineLoungePlaceID", "boardingGroup", "boardingZone",
                "boardingSequenceNumber", "confirmationNumber", "internationalDocumentsVerifiedDeclarationName",
                "membershipProgramName", "membershipProgramNumber", "priorityStatus", "securityScreening",
                "ticketFareClass",
                "transitProvider", "transitStatus", "transitStatusReason", "vehicleName", "vehicleNumber",
                "vehicleType",
            ], .string, .boardingPass)
        add(
            [
                "airlineCode", "flightCode", "departureAirportCode", "departureAirportName", "departureTerminal",
                "destinationAirportCode", "destinationAirportName", "destinationGate", "destinationTerminal",
            ], .string, .airlineBoardingPass)
        add(["flightNumber"], .integer, .airlineBoardingPass)
        add(["passengerCapabilities"], .stringArray, .airlineBoardingPass)
        add(
            [
                "carNumber", "departurePlatform", "departureStationName", "destinationPlatform",
                "destinationStationName",
            ], .string, .railBoardingPass)
        add(
            [
                "currentArrivalDate", "currentBoardingDate", "currentDepartureDate",
                "originalArrivalDate", "originalBoardingDate", "originalDepartureDate",
            ], .date, .boardingPass)
        add(["departureLocation", "destinationLocation"], .location, .boardingPass)
        add(
            [
                "departureAirportSecurityPrograms", "destinationAirportSecurityPrograms",
                "passengerAirlineSSRs", "passengerInformationSSRs", "passengerServiceSSRs",
                "passengerEligibleSecurityPrograms",
            ], .stringArray, .boardingPass)
        add(["internationalDocumentsAreVerified"], .boolean, .boardingPass)
        add(["passengerName"], .personName, .boardingPass)
        // Boarding passes and event tickets.
        add(["duration"], .integer, .eventTicketOrBoardingPass)
        add(["seats"], .seats, .eventTicketOrBoardingPass)
        add(["silenceRequested"], .boolean, .eventTicketOrBoardingPass)
        // Store cards, and any pass.
        add(["balance"], .currencyAmount, .storeCard)
        add(["totalPrice"], .currencyAmount, .anyPass)
        add(["wifiAccess"], .wifiNetworks, .anyPass)
        return tags
    }()

    package static let names: [String] = all.keys.sorted()

    /// The keys of the objects inside semantic tags, with the required ones
    /// ("SemanticTagType" in Apple's Wallet Passes documentation).
    package static let locationKeys = ["latitude", "longitude", "altitude", "relevantText"]
    package static let currencyAmountKeys = ["amount", "currencyCode"]
    package static let personNameKeys = [
        "namePrefix", "givenName", "middleName", "familyName", "nameSuffix", "nickname", "phoneticRepresentation",
    ]
    package static let eventDateInfoKeys = ["date", "timeZone", "ignoreTimeComponents", "unannounced", "undetermined"]
    package static let seatKeys = [
        "seatDescription", "seatIdentifier", "seatNumber", "seatRow", "seatSection", "seatAisle", "seatLevel",
        "seatType", "seatSectionColor",
    ]
    package static let wifiNetworkKeys = ["ssid", "password"]
}
