// preferredStyleSchemes and what the semantic-driven styles require.
//
// Wallet lays out a poster event ticket (iOS 18) and a semantic boarding pass
// (iOS 26) from the pass's semantic tags, so those tags are what the pass
// needs. The requirements and their severities are those of Apple's own
// validator (the EventTicket, BoardingPass and Seat validators of Apple's
// pass-builder package): an error where it reports an error, a warning where
// it reports a warning. A value counts as missing when it is absent, null,
// an empty string or an empty array.

extension ValidationRun {
    mutating func checkStyleSchemes(styles: [PassStyle]) {
        guard let schemes = array("preferredStyleSchemes", of: root, at: .root) else { return }
        let style = styles.count == 1 ? styles[0] : nil
        for (index, scheme) in schemes.enumerated() {
            let path: JSONPath = [.key("preferredStyleSchemes"), .index(index)]
            guard expect(scheme, is: .string, at: path), let name = scheme.stringValue else { continue }
            if let known = PassStyleScheme(rawValue: name) {
                if let style, known.style != style {
                    warning(
                        path, "preferredStyleSchemes.style",
                        "\(name) applies to \(known.style.pluralName) only, but the pass is "
                            + "\(Self.article(style)) \(style.key), so Wallet ignores it; remove it, or make "
                            + "the pass \(Self.article(known.style)) \(known.style.key)"
                    )
                }
            } else if PassStyle(rawValue: name) == nil {
                var message =
                    "preferredStyleSchemes value \"\(name)\" is not a scheme Wallet knows "
                    + "(\(PassStyleScheme.allCases.map(\.rawValue).joined(separator: ", ")), or a style name as "
                    + "the fallback)"
                if let nearest = Spelling.nearest(to: name, in: PassStyleScheme.knownValues) {
                    message += "; did you mean \"\(nearest)\"? Rename it if so"
                } else {
                    message += "; remove it"
                }
                warning(path, "preferredStyleSchemes.value", message)
            }
        }
    }

    /// The rules of the scheme that applies to the pass, if any.
    mutating func checkSemanticStyle() {
        guard let scheme = PassStyleScheme.active(in: .object(root)) else { return }
        let semantics = root["semantics"]?.objectValue ?? JSONObject()
        switch scheme {
        case .posterEventTicket: checkPosterEventTicket(semantics)
        case .semanticBoardingPass: checkSemanticBoardingPass(semantics)
        }
        if Self.isMissing(semantics["seats"]) {
            warning(
                [.key("semantics"), .key("seats")], "\(scheme.rawValue).seats",
                "\(Self.schemeDescription(scheme)) should have seat details, which Wallet shows on the pass; "
                    + "add \"seats\": [{\"seatSection\": …, \"seatRow\": …, \"seatNumber\": …}] under semantics"
            )
        }
    }

    static func schemeDescription(_ scheme: PassStyleScheme) -> String {
        switch scheme {
        case .posterEventTicket:
            return "a poster event ticket (an eventTicket whose preferredStyleSchemes lists posterEventTicket)"
        case .semanticBoardingPass:
            return "a semantic boarding pass (a boardingPass whose preferredStyleSchemes lists semanticBoardingPass)"
        }
    }

    /// Absent, null, "" or []: what Apple's validator treats as not given.
    static func isMissing(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: return true
        case .string(let text)?: return text.isEmpty
        case .array(let items)?: return items.isEmpty
        default: return false
        }
    }

    /// Reports `rule` for a semantic tag the scheme needs.
    mutating func requireSemantic(
        _ key: String, in semantics: JSONObject, scheme: PassStyleScheme, severity: Diagnostic.Severity = .error,
        what: String, example: String
    ) {
        guard Self.isMissing(semantics[key]) else { return }
        let verb = severity == .error ? "needs" : "should have"
        let message =
            "\(Self.schemeDescription(scheme)) \(verb) semantics.\(key), "
            + "\(what); add \"\(key)\": \(example) under semantics"
            + (severity == .error ? ", or remove \(scheme.rawValue) from preferredStyleSchemes" : "")
        diagnostics.append(
            Diagnostic(severity, at: [.key("semantics"), .key(key)], rule: "\(scheme.rawValue).\(key)", message))
    }

    mutating func checkPosterEventTicket(_ semantics: JSONObject) {
        let scheme = PassStyleScheme.posterEventTicket
        if root["nfc"] == nil || root["nfc"] == .null {
            error(
                [.key("nfc")], "posterEventTicket.nfc",
                "\(Self.schemeDescription(scheme)) needs nfc, the ticket's NFC payload; add \"nfc\": "
                    + "{\"message\": …, \"encryptionPublicKey\": …, \"requiresAuthentication\": true}, or "
                    + "remove posterEventTicket from preferredStyleSchemes"
            )
        } else if let nfc = root["nfc"]?.objectValue,
            nfc["requiresAuthentication"] == nil || nfc["requiresAuthentication"] == .null
        {
            error(
                [.key("nfc"), .key("requiresAuthentication")], "posterEventTicket.nfc.requiresAuthentication",
                "\(Self.schemeDescription(scheme)) needs nfc.requiresAuthentication; add "
                    + "\"requiresAuthentication\": true (the holder authenticates on every tap) or false to nfc"
            )
        }
        requireSemantic(
            "eventName", in: semantics, scheme: scheme, what: "the event's full name",
            example: "\"The Midnight Owls: Long Night Tour\"")
        requireSemantic(
            "venueName", in: semantics, scheme: scheme, what: "the venue's full name", example: "\"Harbour Hall\"")
        requireSemantic(
            "eventStartDate", in: semantics, scheme: scheme, severity: .warning, what: "when the event starts",
            example: "\"2026-12-12T20:00:00+01:00\"")
        if let start = semantics["eventStartDate"]?.stringValue.flatMap({ try? W3CDate(parsing: $0) }),
            let end = semantics["eventEndDate"]?.stringValue.flatMap({ try? W3CDate(parsing: $0) }),
            start.secondsSince1970 > end.secondsSince1970
        {
            warning(
                [.key("semantics"), .key("eventEndDate")], "posterEventTicket.eventEndDate",
                "semantics.eventEndDate \(end) is before eventStartDate \(start); swap them or fix the end"
            )
        }
        switch semantics["eventType"]?.stringValue.flatMap(EventType.init(rawValue:)) {
        case .sports?:
            requireSemantic(
                "awayTeamAbbreviation", in: semantics, scheme: scheme,
                what: "the away team's abbreviation, as sports tickets show it", example: "\"LIV\"")
            requireSemantic(
                "homeTeamAbbreviation", in: semantics, scheme: scheme,
                what: "the home team's abbreviation, as sports tickets show it", example: "\"HAM\"")
        case .livePerformance?:
            requireSemantic(
                "performerNames", in: semantics, scheme: scheme,
                what: "the performers' names, as live performance tickets show them", example: "[\"The Midnight Owls\"]"
            )
            requireSemantic(
                "artistIDs", in: semantics, scheme: scheme, severity: .warning,
                what: "the Apple Music IDs of the artists, which link the ticket to their music",
                example: "[\"1234567890\"]")
        default:
            break
        }
    }

    mutating func checkSemanticBoardingPass(_ semantics: JSONObject) {
        let scheme = PassStyleScheme.semanticBoardingPass
        let tags: [(key: String, severity: Diagnostic.Severity, what: String, example: String)] = [
            ("airlineCode", .error, "the airline's IATA code", "\"EX\""),
            ("flightNumber", .error, "the numeric part of the flight code", "117"),
            ("originalDepartureDate", .error, "the scheduled departure", "\"2026-12-01T09:30:00Z\""),
            ("originalBoardingDate", .error, "the scheduled boarding time", "\"2026-12-01T08:50:00Z\""),
            ("originalArrivalDate", .error, "the scheduled arrival", "\"2026-12-01T12:40:00-05:00\""),
            ("departureAirportTimeZone", .error, "the departure airport's time zone", "\"Europe/London\""),
            ("departureAirportCode", .error, "the departure airport's IATA code", "\"LHR\""),
            ("departureCityName", .warning, "the departure city Wallet shows", "\"London\""),
            ("destinationAirportTimeZone", .warning, "the destination airport's time zone", "\"America/New_York\""),
            ("destinationAirportCode", .error, "the destination airport's IATA code", "\"JFK\""),
            ("destinationCityName", .warning, "the destination city Wallet shows", "\"New York\""),
        ]
        for tag in tags {
            requireSemantic(
                tag.key, in: semantics, scheme: scheme, severity: tag.severity, what: tag.what, example: tag.example)
        }
        // A name counts when any part but the phonetic one is there (even "").
        let name = semantics["passengerName"]?.objectValue
        let hasName =
            name.map { object in
                SemanticTags.personNameKeys.contains {
                    $0 != "phoneticRepresentation" && object[$0] != nil && object[$0] != .null
                }
            } ?? false
        if !hasName {
            error(
                [.key("semantics"), .key("passengerName")], "semanticBoardingPass.passengerName",
                "\(Self.schemeDescription(scheme)) needs semantics.passengerName with at least one part "
                    + "besides phoneticRepresentation; add \"passengerName\": {\"givenName\": …, \"familyName\": …} "
                    + "under semantics, or remove semanticBoardingPass from preferredStyleSchemes"
            )
        }
    }

    /// Keys only a poster event ticket shows are ignored on every other pass.
    mutating func checkPosterOnlyKeys(styles: [PassStyle]) {
        guard PassStyleScheme.active(in: .object(root)) != .posterEventTicket else { return }
        let fix =
            styles == [.eventTicket]
            ? "add \"preferredStyleSchemes\": [\"posterEventTicket\", \"eventTicket\"] "
                + "to make the pass a poster event ticket, or remove it"
            : "remove it (it works on event tickets that prefer posterEventTicket)"
        for key in PassLinks.posterEventTicketOnlyKeys where root[key] != nil {
            warning(
                [.key(key)], "key.posterEventTicketOnly",
                "\(key) works only on poster event tickets, so Wallet ignores it on this pass; \(fix)")
        }
    }
}
