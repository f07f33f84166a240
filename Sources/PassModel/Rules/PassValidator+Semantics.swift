// Semantic tags ("SemanticTags" and "SemanticTagType" in Apple's Wallet
// Passes documentation): each tag's type, the objects inside them with
// their required keys, and the tags Apple reserves for one kind of pass.

extension ValidationRun {
    /// Checks a `semantics` object of the pass (or of one field). `style` is
    /// the pass's style, when it has exactly one.
    mutating func checkSemantics(_ semantics: JSONObject, at path: JSONPath, style: PassStyle?) {
        reportUnknownKeys(in: semantics, at: path, known: SemanticTags.names, place: "semantics")
        for (key, value) in semantics {
            guard let tag = SemanticTags.all[key] else { continue }
            let tagPath = path.appending(key)
            checkSemanticValue(value, kind: tag.kind, at: tagPath, name: key)
            if let style, tag.scope.isExclusive, !tag.scope.includes(style) {
                warning(
                    tagPath, "semantics.style",
                    "Apple's documentation says to use semantic tag \(key) only on \(tag.scope.description), "
                        + "but the pass is \(Self.article(style)) \(style.key); remove it, or check the pass's style"
                )
            }
        }
    }

    static func article(_ style: PassStyle) -> String { style == .eventTicket ? "an" : "a" }

    mutating func checkSemanticValue(_ value: JSONValue, kind: SemanticTags.Kind, at path: JSONPath, name: String) {
        switch kind {
        case .string:
            expect(value, is: .string, at: path)
        case .boolean:
            expect(value, is: .boolean, at: path)
        case .integer:
            expect(value, is: .integer, at: path)
        case .date:
            if expect(value, is: .string, at: path), let text = value.stringValue {
                checkDate(text, at: path, name: name)
            }
        case .stringArray:
            guard expect(value, is: .array, at: path), let items = value.arrayValue else { return }
            for (index, item) in items.enumerated() { expect(item, is: .string, at: path.appending(index)) }
        case .eventType:
            guard expect(value, is: .string, at: path), let text = value.stringValue, EventType(rawValue: text) == nil
            else { return }
            let suggestion =
                EventType.suggestion(for: text).map { "; use \($0.rawValue)" }
                ?? "; use PKEventTypeGeneric if none fits"
            error(
                path, "semantics.eventType",
                "eventType \"\(text)\" is not one of \(EventType.allowedValues)\(suggestion)")
        case .location:
            guard expect(value, is: .object, at: path), let object = value.objectValue else { return }
            reportUnknownKeys(in: object, at: path, known: SemanticTags.locationKeys, place: "a semantic location")
            checkCoordinate("latitude", of: object, at: path, range: -90...90)
            checkCoordinate("longitude", of: object, at: path, range: -180...180)
            _ = number("altitude", of: object, at: path)
            _ = string("relevantText", of: object, at: path)
        case .currencyAmount:
            guard expect(value, is: .object, at: path), let object = value.objectValue else { return }
            reportUnknownKeys(in: object, at: path, known: SemanticTags.currencyAmountKeys, place: "a currency amount")
            // Apple types the amount as a string, so that no precision is lost.
            _ = string("amount", of: object, at: path)
            _ = string("currencyCode", of: object, at: path)
        case .personName:
            guard expect(value, is: .object, at: path), let object = value.objectValue else { return }
            reportUnknownKeys(in: object, at: path, known: SemanticTags.personNameKeys, place: "a person name")
            for key in SemanticTags.personNameKeys { _ = string(key, of: object, at: path) }
        case .eventDateInfo:
            guard expect(value, is: .object, at: path), let object = value.objectValue else { return }
            reportUnknownKeys(in: object, at: path, known: SemanticTags.eventDateInfoKeys, place: "eventStartDateInfo")
            if let text = string("date", of: object, at: path) {
                checkDate(text, at: path.appending("date"), name: "date")
            }
            _ = string("timeZone", of: object, at: path)
            for key in ["ignoreTimeComponents", "unannounced", "undetermined"] {
                checkBoolean(key, of: object, at: path)
            }
        case .seats:
            guard expect(value, is: .array, at: path), let seats = value.arrayValue else { return }
            for (index, seat) in seats.enumerated() {
                let seatPath = path.appending(index)
                guard expect(seat, is: .object, at: seatPath), let object = seat.objectValue else { continue }
                reportUnknownKeys(in: object, at: seatPath, known: SemanticTags.seatKeys, place: "a seat")
                for key in SemanticTags.seatKeys where key != "seatSectionColor" {
                    _ = string(key, of: object, at: seatPath)
                }
                if let color = string("seatSectionColor", of: object, at: seatPath) {
                    checkColor(color, at: seatPath.appending("seatSectionColor"), name: "seatSectionColor")
                }
            }
        case .wifiNetworks:
            guard expect(value, is: .array, at: path), let networks = value.arrayValue else { return }
            for (index, network) in networks.enumerated() {
                let networkPath = path.appending(index)
                guard expect(network, is: .object, at: networkPath), let object = network.objectValue else { continue }
                reportUnknownKeys(
                    in: object, at: networkPath, known: SemanticTags.wifiNetworkKeys, place: "a Wi-Fi network")
                for key in SemanticTags.wifiNetworkKeys {
                    requireKey(
                        key, of: object, at: networkPath, rule: "semantics.wifiAccess.\(key)",
                        what: "the Wi-Fi network at \(networkPath)",
                        hint: key == "ssid" ? "the network's name" : "the network's password")
                }
            }
        }
    }

    /// Reports `rule` when `key` is absent from `object`, then checks that it is a string.
    mutating func requireKey(
        _ key: String, of object: JSONObject, at path: JSONPath, rule: String, what: String, hint: String
    ) {
        guard object[key] != nil else {
            error(path.appending(key), rule, "\(what) has no \(key), which is required; add \"\(key)\": \(hint)")
            return
        }
        _ = string(key, of: object, at: path)
    }
}
