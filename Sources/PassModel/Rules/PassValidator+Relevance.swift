// Dates, locations and beacons: when and where a pass shows on the lock
// screen ("Pass.Locations", "Pass.Beacons" and "Pass.RelevantDates" in
// Apple's Wallet Passes documentation): at most 10 locations and 10 beacons,
// a relevant interval of at most 24 hours.

extension ValidationRun {
    mutating func checkRelevance() {
        for key in ["relevantDate", "expirationDate"] {
            if let text = string(key, of: root, at: .root) { checkDate(text, at: [.key(key)], name: key) }
        }
        checkRelevantDates()
        checkLocations()
        checkBeacons()
        if let distance = number("maxDistance", of: root, at: .root), distance <= 0 {
            error(
                [.key("maxDistance")], "maxDistance",
                "maxDistance is \(JSONValue.format(distance)), but it must be greater than 0 "
                    + "(metres); use e.g. 100, or remove it to use Wallet's default"
            )
        }
    }

    /// A W3C date-time with at least hours, minutes and a time zone.
    @discardableResult
    mutating func checkDate(_ text: String, at path: JSONPath, name: String) -> W3CDate? {
        do {
            return try W3CDate(parsing: text)
        } catch {
            self.error(path, "date.format", "\(name) \"\(text)\" \(error); \(Self.dateExample(for: text, error))")
            return nil
        }
    }

    /// What to write instead, built from the text when possible.
    static func dateExample(for text: String, _ error: W3CDate.ParseError) -> String {
        switch error {
        case .missingTime: return "write e.g. \(text)T09:30Z"
        case .missingTimeZone: return "write e.g. \(text)Z for UTC or \(text)+01:00"
        default: return "write it like 2026-12-01T09:30:00+01:00"
        }
    }

    /// iOS 18: each entry is one moment `{date}` or an interval
    /// `{startDate, endDate}` of at most 24 hours that ends after it starts.
    mutating func checkRelevantDates() {
        guard let entries = array("relevantDates", of: root, at: .root) else { return }
        for (index, entry) in entries.enumerated() {
            let path: JSONPath = [.key("relevantDates"), .index(index)]
            guard expect(entry, is: .object, at: path), let object = entry.objectValue else { continue }
            reportUnknownKeys(
                in: object, at: path, known: RelevantDate.CodingKeys.allCases.map(\.rawValue),
                place: "a relevantDates entry")
            let hasDate = object["date"] != nil
            let hasStart = object["startDate"] != nil
            let hasEnd = object["endDate"] != nil
            if !hasDate, !hasStart, !hasEnd {
                error(
                    path, "relevantDates.entry",
                    "relevantDates entry \(index) has neither date nor startDate and endDate; add {\"date\": "
                        + "…} for a moment or {\"startDate\": …, \"endDate\": …} for an interval")
                continue
            }
            if hasDate, hasStart || hasEnd {
                error(
                    path, "relevantDates.entry",
                    "relevantDates entry \(index) has both date and an interval; use either "
                        + "{\"date\": …} or {\"startDate\": …, \"endDate\": …}")
            } else if hasStart != hasEnd {
                let (present, missing) = hasStart ? ("startDate", "endDate") : ("endDate", "startDate")
                error(
                    path.appending(missing), "relevantDates.entry",
                    "relevantDates entry \(index) has \(present) but no \(missing); an "
                        + "interval needs both (at most 24 hours apart)")
            }
            var dates: [String: W3CDate] = [:]
            for key in ["date", "startDate", "endDate"] {
                guard let text = string(key, of: object, at: path) else { continue }
                dates[key] = checkDate(text, at: path.appending(key), name: key)
            }
            guard let start = dates["startDate"], let end = dates["endDate"] else { continue }
            let seconds = end.secondsSince1970 - start.secondsSince1970
            if seconds <= 0 {
                error(
                    path.appending("endDate"), "relevantDates.order",
                    "endDate \(end) is not after startDate \(start); swap them or fix the end")
            } else if seconds > 24 * 3600 {
                error(
                    path.appending("endDate"), "relevantDates.interval",
                    "the interval from \(start) to \(end) is \(Self.hoursText(seconds)) long, but Wallet "
                        + "allows at most 24 hours; split it into several relevantDates entries"
                )
            }
        }
    }

    static func hoursText(_ seconds: Double) -> String {
        let hours = seconds / 3600
        return hours == hours.rounded()
            ? "\(Int(hours)) hours" : "\(JSONValue.format((hours * 10).rounded() / 10)) hours"
    }

    /// Wallet monitors at most 10 locations per pass.
    mutating func checkLocations() {
        guard let locations = array("locations", of: root, at: .root) else { return }
        if locations.count > 10 {
            error(
                [.key("locations")], "locations.count",
                "locations has \(locations.count) entries, but Wallet uses at most 10; keep the 10 most relevant"
            )
        }
        for (index, location) in locations.enumerated() {
            let path: JSONPath = [.key("locations"), .index(index)]
            guard expect(location, is: .object, at: path), let object = location.objectValue else { continue }
            reportUnknownKeys(
                in: object, at: path, known: Location.CodingKeys.allCases.map(\.rawValue), place: "a location")
            checkCoordinate("latitude", of: object, at: path, range: -90...90)
            checkCoordinate("longitude", of: object, at: path, range: -180...180)
            _ = number("altitude", of: object, at: path)
            _ = string("relevantText", of: object, at: path)
        }
    }

    mutating func checkCoordinate(_ key: String, of location: JSONObject, at path: JSONPath, range: ClosedRange<Double>)
    {
        let rule = "location.\(key)"
        guard location[key] != nil else {
            error(
                path.appending(key), rule,
                "the location at \(path) has no \(key); add it as a number of degrees "
                    + "(\(JSONValue.format(range.lowerBound)) to \(JSONValue.format(range.upperBound)))")
            return
        }
        guard let value = number(key, of: location, at: path), !range.contains(value) else { return }
        error(
            path.appending(key), rule,
            "\(key) \(JSONValue.format(value)) is outside "
                + "\(JSONValue.format(range.lowerBound))…\(JSONValue.format(range.upperBound)) degrees; check that "
                + "latitude and longitude are not swapped"
        )
    }

    /// Wallet monitors at most 10 beacons; major and minor are 16-bit numbers.
    mutating func checkBeacons() {
        guard let beacons = array("beacons", of: root, at: .root) else { return }
        if beacons.count > 10 {
            error(
                [.key("beacons")], "beacons.count",
                "beacons has \(beacons.count) entries, but Wallet uses at most 10; keep the 10 most relevant")
        }
        for (index, beacon) in beacons.enumerated() {
            let path: JSONPath = [.key("beacons"), .index(index)]
            guard expect(beacon, is: .object, at: path), let object = beacon.objectValue else { continue }
            reportUnknownKeys(
                in: object, at: path, known: Beacon.CodingKeys.allCases.map(\.rawValue), place: "a beacon")
            let uuidPath = path.appending("proximityUUID")
            if object["proximityUUID"] == nil {
                error(
                    uuidPath, "beacon.proximityUUID",
                    "the beacon at \(path) has no proximityUUID; add the beacon's UUID, "
                        + "e.g. \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"")
            } else if let uuid = string("proximityUUID", of: object, at: path), !Self.isUUID(uuid) {
                error(
                    uuidPath, "beacon.proximityUUID",
                    "proximityUUID \"\(uuid)\" is not a UUID; write 32 hex digits grouped "
                        + "8-4-4-4-12, e.g. \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"")
            }
            for key in ["major", "minor"] {
                guard let value = number(key, of: object, at: path) else { continue }
                if value != value.rounded() || !(0...65535).contains(value) {
                    error(
                        path.appending(key), "beacon.\(key)",
                        "\(key) \(JSONValue.format(value)) is not a whole number from 0 to 65535, as "
                            + "iBeacon \(key) values are; fix it to the beacon's value")
                }
            }
            _ = string("relevantText", of: object, at: path)
        }
    }

    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.unicodeScalars.allSatisfy(ASCII.hexDigit) }
    }
}
