// Links, featured actions and upcoming events ("Pass" and
// "Pass.UpcomingPassInformationEntry" in Apple's Wallet Passes documentation).

extension ValidationRun {
    mutating func checkLinks() {
        for key in PassLinks.eventGuideKeys + PassLinks.travelKeys { _ = string(key, of: root, at: .root) }
    }

    /// Each action needs an identifier, unique among the actions, and a type.
    mutating func checkFeaturedActions() {
        guard let actions = array("featuredActions", of: root, at: .root) else { return }
        var identifiers: [String: JSONPath] = [:]
        for (index, action) in actions.enumerated() {
            let path: JSONPath = [.key("featuredActions"), .index(index)]
            guard expect(action, is: .object, at: path), let object = action.objectValue else { continue }
            reportUnknownKeys(
                in: object, at: path, known: FeaturedAction.CodingKeys.allCases.map(\.rawValue),
                place: "a featured action")
            requireKey(
                "identifier", of: object, at: path, rule: "featuredAction.identifier",
                what: "the featured action at \(path)", hint: "a name unique among the pass's featured actions")
            requireKey(
                "type", of: object, at: path, rule: "featuredAction.type", what: "the featured action at \(path)",
                hint: "the kind of action")
            _ = string("url", of: object, at: path)
            if let identifier = object["identifier"]?.stringValue {
                if let first = identifiers[identifier] {
                    error(
                        path.appending("identifier"), "featuredAction.identifier.unique",
                        "featured action identifier \"\(identifier)\" is already used at "
                            + "\(first); identifiers must be unique, so rename one")
                } else {
                    identifiers[identifier] = path
                }
            }
        }
    }

    mutating func checkUpcomingPassInformation(style: PassStyle?) {
        guard let entries = array("upcomingPassInformation", of: root, at: .root) else { return }
        var identifiers: [String: JSONPath] = [:]
        for (index, entry) in entries.enumerated() {
            let path: JSONPath = [.key("upcomingPassInformation"), .index(index)]
            guard expect(entry, is: .object, at: path), let object = entry.objectValue else { continue }
            reportUnknownKeys(
                in: object, at: path, known: UpcomingPassEntry.CodingKeys.allCases.map(\.rawValue),
                place: "an upcoming pass entry")
            let what = "the upcoming pass entry at \(path)"
            requireKey(
                "identifier", of: object, at: path, rule: "upcoming.identifier", what: what,
                hint: "a name unique among the entries, e.g. \"match-2027-01-09\"")
            requireKey(
                "name", of: object, at: path, rule: "upcoming.name", what: what,
                hint: "the event's name, which Wallet shows")
            requireKey("type", of: object, at: path, rule: "upcoming.type", what: what, hint: "\"event\"")
            if let type = object["type"]?.stringValue, type != "event" {
                warning(
                    path.appending("type"), "upcoming.type.value",
                    "upcoming pass entry type \"\(type)\" is not supported; Wallet shows "
                        + "only entries of type \"event\", so write \"event\"")
            }
            if let identifier = object["identifier"]?.stringValue {
                if let first = identifiers[identifier] {
                    error(
                        path.appending("identifier"), "upcoming.identifier.unique",
                        "upcoming pass entry identifier \"\(identifier)\" is already used at "
                            + "\(first); identifiers must be unique, so rename one")
                } else {
                    identifiers[identifier] = path
                }
            }
            checkBoolean("isActive", of: object, at: path)
            checkUpcomingDate(object, at: path)
            if let urls = self.object("urls", of: object, at: path) {
                reportUnknownKeys(
                    in: urls, at: path.appending("urls"), known: PassLinks.eventGuideKeys,
                    place: "an upcoming entry's urls")
                for key in PassLinks.eventGuideKeys { _ = string(key, of: urls, at: path.appending("urls")) }
            }
            checkUpcomingImages(object, at: path)
            checkStoreIdentifiers("auxiliaryStoreIdentifiers", of: object, at: path)
            if let semantics = self.object("semantics", of: object, at: path) {
                checkSemantics(semantics, at: path.appending("semantics"), style: style)
            }
            // An entry's fields are keyed apart from the pass's own.
            let passFieldKeys = fieldKeys
            fieldKeys = [:]
            for area in [FieldArea.additionalInfo, .back] {
                guard let fields = array(area.key, of: object, at: path) else { continue }
                for (fieldIndex, field) in fields.enumerated() {
                    let fieldPath = path.appending(area.key).appending(fieldIndex)
                    guard expect(field, is: .object, at: fieldPath), let fieldObject = field.objectValue else {
                        continue
                    }
                    checkField(fieldObject, at: fieldPath, area: area, style: style ?? .eventTicket)
                }
            }
            fieldKeys = passFieldKeys
        }
    }

    mutating func checkUpcomingDate(_ entry: JSONObject, at path: JSONPath) {
        guard let information = object("dateInformation", of: entry, at: path) else { return }
        let base = path.appending("dateInformation")
        reportUnknownKeys(
            in: information, at: base,
            known: ["date", "timeZone", "ignoreTimeComponents", "isAllDay", "isUnannounced", "isUndetermined"],
            place: "dateInformation"
        )
        if let text = string("date", of: information, at: base) {
            checkDate(text, at: base.appending("date"), name: "date")
        }
        _ = string("timeZone", of: information, at: base)
        for key in ["ignoreTimeComponents", "isAllDay", "isUnannounced", "isUndetermined"] {
            checkBoolean(key, of: information, at: base)
        }
    }

    /// Wallet downloads these images itself: each URL must be https, with the
    /// image's SHA-256 and at most 2 MB.
    mutating func checkUpcomingImages(_ entry: JSONObject, at path: JSONPath) {
        guard let images = object("images", of: entry, at: path) else { return }
        let base = path.appending("images")
        reportUnknownKeys(
            in: images, at: base, known: ["headerImage", "venueMap"], place: "an upcoming entry's images")
        for name in ["headerImage", "venueMap"] {
            guard let image = object(name, of: images, at: base) else { continue }
            let imagePath = base.appending(name)
            reportUnknownKeys(in: image, at: imagePath, known: ["urls", "reuseExisting"], place: name)
            checkBoolean("reuseExisting", of: image, at: imagePath)
            for (index, entry) in (array("urls", of: image, at: imagePath) ?? []).enumerated() {
                let entryPath = imagePath.appending("urls").appending(index)
                guard expect(entry, is: .object, at: entryPath), let object = entry.objectValue else { continue }
                reportUnknownKeys(
                    in: object, at: entryPath, known: ["url", "sha256", "scale", "size"], place: "an image URL entry")
                let what = "the image URL entry at \(entryPath)"
                requireKey(
                    "url", of: object, at: entryPath, rule: "upcoming.image.url", what: what,
                    hint: "the https:// address of the image")
                requireKey(
                    "sha256", of: object, at: entryPath, rule: "upcoming.image.sha256", what: what,
                    hint: "the SHA-256 of the image file (`sha256sum FILE`)")
                if let url = object["url"]?.stringValue, !url.lowercased().hasPrefix("https://") {
                    error(
                        entryPath.appending("url"), "upcoming.image.url",
                        "image URL \"\(url)\" is not https; Wallet downloads these images over "
                            + "https only, so serve it from an https:// address")
                }
                _ = number("scale", of: object, at: entryPath)
                if object["size"] != nil, expect(object["size"]!, is: .integer, at: entryPath.appending("size")),
                    let size = object["size"]?.numberValue, size > 2_097_152
                {
                    error(
                        entryPath.appending("size"), "upcoming.image.size",
                        "the image is \(JSONValue.format(size)) bytes, but Wallet downloads "
                            + "at most 2 MB (2097152 bytes); make it smaller")
                }
            }
        }
    }
}
