// The style key, its structure and its fields ("Pass.PassFields" and
// "Pass.PassFieldContent" in Apple's Wallet Passes documentation).

extension ValidationRun {
    /// Exactly one style key. Every style object present is returned (and
    /// checked), so that problems inside a second style are reported too.
    mutating func checkStyles() -> [(style: PassStyle, structure: JSONObject)] {
        let present = PassStyle.allCases.filter { root[$0.key] != nil }
        if present.isEmpty {
            error(
                .root, "style.missing",
                "the pass has no style key; add exactly one of "
                    + "\(PassStyle.allCases.map(\.key).joined(separator: ", ")), holding the "
                    + "pass's fields"
            )
        }
        if present.count > 1 {
            let names = present.map(\.key).joined(separator: " and ")
            for extra in present.dropFirst() {
                error(
                    [.key(extra.key)], "style.multiple",
                    "the pass has \(names), but a pass has exactly one style key; keep one and remove \(extra.key)"
                )
            }
        }
        return present.compactMap { style in
            object(style.key, of: root, at: .root).map { (style, $0) }
        }
    }

    /// The style object: transitType, the five field arrays, display limits.
    mutating func checkStructure(_ structure: JSONObject, style: PassStyle, firstBarcode: BarcodeFormat?) {
        let base: JSONPath = [.key(style.key)]
        reportUnknownKeys(
            in: structure, at: base, known: PassStructure.knownKeys,
            place: "the \(style.key) object"
        )
        checkTransitType(structure, style: style)

        var counts: [FieldArea: Int] = [:]
        for area in FieldArea.allCases {
            guard let fields = array(area.key, of: structure, at: base) else { continue }
            counts[area] = fields.count
            for (index, field) in fields.enumerated() {
                let path = base.appending(area.key).appending(index)
                guard expect(field, is: .object, at: path), let object = field.objectValue else { continue }
                checkField(object, at: path, area: area, style: style)
            }
        }
        checkDisplayLimits(counts, style: style, firstBarcode: firstBarcode)
    }

    /// Boarding passes need a transit type for their layout (the icon
    /// between the primary fields); other styles must not have one.
    mutating func checkTransitType(_ structure: JSONObject, style: PassStyle) {
        let path: JSONPath = [.key(style.key), .key("transitType")]
        guard style == .boardingPass else {
            if structure["transitType"] != nil {
                // Wallet ignores it there (Apple documents where it applies): guidance.
                guidance(
                    path, "transitType.forbidden",
                    "transitType is only for boarding passes, but the pass's style is "
                        + "\(style.key); remove it, or make the pass a boardingPass"
                )
            }
            return
        }
        guard structure["transitType"] != nil else {
            error(
                path, "transitType.required",
                "a boarding pass needs a transitType; add one of \(TransitType.allowedValues), "
                    + "e.g. \"transitType\": \"PKTransitTypeAir\" for flights"
            )
            return
        }
        guard let text = string("transitType", of: structure, at: [.key(style.key)]) else { return }
        guard TransitType(rawValue: text) == nil else { return }
        error(
            path, "transitType.value",
            "transitType \"\(text)\" is not one of \(TransitType.allowedValues); use "
                + "\(Self.transitSuggestion(for: text).rawValue)\(Self.transitPurpose(Self.transitSuggestion(for: text)))"
        )
    }

    /// What someone who wrote `text` most likely meant: "plane" → Air.
    static func transitSuggestion(for text: String) -> TransitType {
        let lowered = text.lowercased()
        let synonyms: [(words: [String], type: TransitType)] = [
            (["air", "plane", "airplane", "aeroplane", "flight", "fly", "airline", "aircraft"], .air),
            (["boat", "ship", "ferry", "cruise", "sea"], .boat),
            (["bus", "coach"], .bus),
            (["train", "rail", "railway", "tram", "metro", "subway"], .train),
        ]
        for (words, type) in synonyms where words.contains(where: { lowered.hasSuffix($0) }) { return type }
        return TransitType.suggestion(for: text) ?? .generic
    }

    static func transitPurpose(_ type: TransitType) -> String {
        switch type {
        case .air: return " for flights"
        case .boat: return " for ships and ferries"
        case .bus: return " for buses"
        case .train: return " for trains"
        case .generic: return " for other transport"
        }
    }

    // MARK: One field

    mutating func checkField(_ field: JSONObject, at path: JSONPath, area: FieldArea, style: PassStyle) {
        reportUnknownKeys(in: field, at: path, known: Field.knownKeys, place: "a field")
        checkFieldKey(field, at: path)
        _ = string("label", of: field, at: path)
        let value = checkFieldValue(field, at: path)
        checkAttributedValue(field, at: path)
        checkChangeMessage(field, at: path)
        checkTextAlignment(field, at: path, area: area)
        checkDateAndTimeStyle(field, at: path, value: value)
        checkNumberStyle(field, at: path, value: value)
        checkDataDetectorTypes(field, at: path, area: area)
        checkRow(field, at: path, area: area, style: style)
        if let semantics = member("semantics", of: field, at: path, is: .object)?.objectValue {
            checkSemantics(semantics, at: path.appending("semantics"), style: style)
        }
    }

    /// Wallet tells fields apart by key (for change messages and updates),
    /// so every key is unique across all the pass's field arrays.
    mutating func checkFieldKey(_ field: JSONObject, at path: JSONPath) {
        var keyPath: JSONPath { path.appending("key") }
        guard field["key"] != nil else {
            error(
                keyPath, "field.key.missing",
                "the field at \(path) has no key; add \"key\": a name unique among all the pass's fields, e.g. \"gate\""
            )
            return
        }
        guard let key = string("key", of: field, at: path) else { return }
        guard !key.isEmpty else {
            error(
                keyPath, "field.key.missing",
                "the field at \(path) has an empty key; give it a name unique "
                    + "among all the pass's fields, e.g. \"gate\"")
            return
        }
        if let first = fieldKeys[key] {
            error(
                keyPath, "field.key.unique",
                "field key \"\(key)\" is already used at \(first); keys must be unique across "
                    + "all of the pass's field arrays, so rename one of them"
            )
        } else {
            fieldKeys[key] = path
        }
    }

    /// The value is a string or a number (dates are strings). Returns it when valid.
    mutating func checkFieldValue(_ field: JSONObject, at path: JSONPath) -> JSONValue? {
        var valuePath: JSONPath { path.appending("value") }
        guard let value = field["value"] else {
            error(
                valuePath, "field.value.missing",
                "the field at \(path) has no value; add \"value\": a string, a "
                    + "number, or a date such as \"2026-12-01T09:30Z\"")
            return nil
        }
        switch value {
        case .string, .int, .double:
            return value
        default:
            error(
                valuePath, "field.value.type",
                "the field value is \(value.typeName), but a value must be a string, a "
                    + "number or an ISO-8601 date string; write it as "
                    + "text\(value.isScalar ? " in quotes: \"\(value.serializedString())\"" : "")"
            )
            return nil
        }
    }

    /// `attributedValue` may carry links, and nothing else: Wallet renders only `<a href="…">` (Apple's
    /// PassFieldContent); other markup shows up as raw text or breaks the field, and a link opens what its
    /// target says, so only https, http, tel and mailto targets are allowed. Read by libxml2 (`AttributedValue`).
    mutating func checkAttributedValue(_ field: JSONObject, at path: JSONPath) {
        guard let value = field["attributedValue"] else { return }
        let attributedPath = path.appending("attributedValue")
        switch value {
        case .int, .double: return
        case .string(let text):
            // Localizable: checked as each language's pass.strings resolves it.
            for variant in localizedVariants(of: text) {
                let place = variant.language.isEmpty ? "" : " (in \(variant.language).lproj/pass.strings)"
                checkAttributedText(variant.text, place: place, at: attributedPath)
            }
        default:
            error(
                attributedPath, "field.attributedValue",
                "attributedValue is \(value.typeName), but it must be a string (which may "
                    + "contain <a href=\"…\"> links) or a number; write it as text"
            )
        }
    }

    private mutating func checkAttributedText(_ text: String, place: String, at path: JSONPath) {
        let problems = AttributedValue.reading(text).problems
        var markup: [String] = []
        var targets: [String] = []
        for problem in problems {
            switch problem {
            case .tag(let name): markup.append("<\(name)>")
            case .attribute(let name): markup.append("the attribute \(name) on a link")
            case .linkWithoutHref: markup.append("<a> without href")
            case .malformed(let reason): markup.append("markup that is not well formed (\(reason))")
            case .target(let href): targets.append("\"\(href.count > 60 ? String(href.prefix(57)) + "…" : href)\"")
            case .unreadable(let reason):
                error(
                    path, "field.attributedValue",
                    "attributedValue\(place) cannot be read as HTML: \(reason); write "
                        + "text with <a href=\"…\">…</a> links only")
            }
        }
        if !markup.isEmpty {
            error(
                path, "field.attributedValue",
                "attributedValue\(place) contains \(markup.joined(separator: ", ")), but Wallet supports only "
                    + "links written <a href=\"…\">…</a>; remove the other tags and attributes")
        }
        if !targets.isEmpty {
            error(
                path, "field.attributedValue.link",
                "attributedValue\(place) links to \(targets.joined(separator: ", ")), but a "
                    + "link's target must be an https, http, tel or mailto URL "
                    + "(e.g. https://example.com/terms, tel:+15551234567, "
                    + "mailto:help@example.com); javascript:, data: and relative links are refused")
        }
    }

    /// The notification text needs `%@`, where Wallet puts the new value.
    /// A changeMessage is localizable: when it is a key of the pass's
    /// pass.strings, Wallet uses that language's value, so that is checked.
    mutating func checkChangeMessage(_ field: JSONObject, at path: JSONPath) {
        guard let message = string("changeMessage", of: field, at: path) else { return }
        for variant in localizedVariants(of: message) where !variant.text.contains("%@") {
            let shown =
                variant.language.isEmpty
                ? "changeMessage \"\(message)\""
                : "changeMessage \"\(message)\" (in \(variant.language).lproj/pass.strings: \"\(variant.text)\")"
            error(
                path.appending("changeMessage"), "field.changeMessage",
                "\(shown) has no %@; Wallet replaces %@ with the new value, so write e.g. \"Gate changed to %@\""
            )
        }
    }

    /// Primary and back fields have a fixed alignment, so Wallet rejects one.
    mutating func checkTextAlignment(_ field: JSONObject, at path: JSONPath, area: FieldArea) {
        guard let alignment = string("textAlignment", of: field, at: path) else { return }
        let alignmentPath = path.appending("textAlignment")
        if TextAlignment(rawValue: alignment) == nil {
            let suggestion =
                TextAlignment.suggestion(for: alignment).map { "; use \($0.rawValue)" } ?? "; use one of those"
            error(
                alignmentPath, "field.textAlignment",
                "textAlignment \"\(alignment)\" is not one of \(TextAlignment.allowedValues)\(suggestion)")
        }
        if area == .primary || area == .back {
            // Apple's documentation rules it out; Wallet ignores it (passes
            // that carried it were distributed and shown): guidance.
            guidance(
                alignmentPath, "field.textAlignment.placement",
                "textAlignment is not allowed on \(area.key); Wallet aligns them itself, so remove "
                    + "it (it is fine on header, secondary and auxiliary fields)"
            )
        }
    }

    /// With a date or time style, Wallet formats the value as a date, so
    /// the value must be a W3C date-time; `ignoresTimeZone` and `isRelative`
    /// only mean something with one of the styles.
    mutating func checkDateAndTimeStyle(_ field: JSONObject, at path: JSONPath, value: JSONValue?) {
        var hasStyle = false
        for (key, rule) in [("dateStyle", "field.dateStyle"), ("timeStyle", "field.timeStyle")] {
            guard field[key] != nil else { continue }
            hasStyle = true
            guard let style = string(key, of: field, at: path), DateStyle(rawValue: style) == nil else { continue }
            let suggestion = DateStyle.suggestion(for: style).map { "; use \($0.rawValue)" } ?? "; use one of those"
            error(
                path.appending(key), rule, "\(key) \"\(style)\" is not one of \(DateStyle.allowedValues)\(suggestion)")
        }
        checkBoolean("ignoresTimeZone", of: field, at: path)
        checkBoolean("isRelative", of: field, at: path)
        if !hasStyle {
            for key in ["ignoresTimeZone", "isRelative"] where field[key] != nil {
                warning(
                    path.appending(key), "field.dateOptions",
                    "\(key) has no effect without dateStyle or timeStyle; add one (e.g. "
                        + "\"dateStyle\": \"PKDateStyleMedium\") or remove \(key)"
                )
            }
        }
        guard hasStyle, let value else { return }
        let valuePath = path.appending("value")
        guard case .string(let text) = value else {
            error(
                valuePath, "field.value.date",
                "the field has a dateStyle or timeStyle, so its value must be an ISO-8601 date string such as "
                    + "\"2026-12-01T09:30Z\", but it is \(value.typeName); write the date as text, or remove "
                    + "the style"
            )
            return
        }
        do {
            _ = try W3CDate(parsing: text)
        } catch {
            self.error(
                valuePath, "field.value.date",
                "the field has a dateStyle or timeStyle, so its value must be a date, but "
                    + "\"\(text)\" \(error); \(Self.dateExample(for: text, error))"
            )
        }
    }

    /// Number and currency formatting only apply to numbers; a string value
    /// with them is shown unformatted or rejected.
    mutating func checkNumberStyle(_ field: JSONObject, at path: JSONPath, value: JSONValue?) {
        let isNumber = value?.isNumber ?? true  // a missing or broken value is reported elsewhere
        if let style = string("numberStyle", of: field, at: path), NumberStyle(rawValue: style) == nil {
            let suggestion = NumberStyle.suggestion(for: style).map { "; use \($0.rawValue)" } ?? "; use one of those"
            error(
                path.appending("numberStyle"), "field.numberStyle",
                "numberStyle \"\(style)\" is not one of \(NumberStyle.allowedValues)\(suggestion)")
        }
        if field["numberStyle"] != nil, !isNumber {
            error(
                path.appending("numberStyle"), "field.numberStyle.numeric",
                "numberStyle needs a numeric value, but the value is a string; write the value as "
                    + "a number without quotes (e.g. 0.25), or remove numberStyle"
            )
        }
        if let code = string("currencyCode", of: field, at: path) {
            let valid = code.unicodeScalars.count == 3 && code.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) }
            if !valid {
                error(
                    path.appending("currencyCode"), "field.currencyCode",
                    "currencyCode \"\(code)\" is not an ISO 4217 code, which is three upper-case letters; "
                        + "use e.g. \(code.count == 3 ? code.uppercased() : "EUR or USD")"
                )
            }
        }
        if field["currencyCode"] != nil, !isNumber {
            error(
                path.appending("currencyCode"), "field.currencyCode.numeric",
                "currencyCode needs a numeric value, but the value is a string; write the amount as "
                    + "a number without quotes (e.g. 12.5), or remove currencyCode"
            )
        }
        if field["currencyCode"] != nil, field["numberStyle"] != nil {
            warning(
                path.appending("currencyCode"), "field.currencyCode.numberStyle",
                "the field has both currencyCode and numberStyle, but Wallet formats a value "
                    + "either as money or as a number, not both; remove numberStyle to show an "
                    + "amount, or currencyCode to show a plain number"
            )
        }
    }

    /// Data detectors make text tappable, which only the back of a pass supports.
    mutating func checkDataDetectorTypes(_ field: JSONObject, at path: JSONPath, area: FieldArea) {
        guard let detectors = array("dataDetectorTypes", of: field, at: path) else { return }
        let detectorsPath = path.appending("dataDetectorTypes")
        for (index, detector) in detectors.enumerated() {
            let itemPath = detectorsPath.appending(index)
            guard expect(detector, is: .string, at: itemPath), let text = detector.stringValue else { continue }
            if DataDetectorType(rawValue: text) == nil {
                let suggestion =
                    DataDetectorType.suggestion(for: text).map { "; use \($0.rawValue)" } ?? "; use one of those"
                error(
                    itemPath, "field.dataDetectorTypes",
                    "data detector \"\(text)\" is not one of \(DataDetectorType.allowedValues)\(suggestion)")
            }
        }
        if area != .back, area != .additionalInfo {
            // Wallet ignores it there (Apple documents where it applies): guidance.
            guidance(
                detectorsPath, "field.dataDetectorTypes.placement",
                "dataDetectorTypes applies to backFields and additionalInfoFields only, but this field is in "
                    + "\(area.key); move the field to backFields or remove dataDetectorTypes"
            )
        }
    }

    /// Event tickets can lay auxiliary fields out in two rows; `row` picks
    /// the row and means nothing anywhere else.
    mutating func checkRow(_ field: JSONObject, at path: JSONPath, area: FieldArea, style: PassStyle) {
        guard let row = field["row"] else { return }
        let rowPath = path.appending("row")
        if row != .int(0), row != .int(1), row != .double(0), row != .double(1) {
            error(
                rowPath, "field.row",
                "row is \(row.serializedString()), but it must be 0 (first row) "
                    + "or 1 (second row); set it to one of them")
        }
        if !(style == .eventTicket && area == .auxiliary) {
            // Wallet ignores it there (Apple documents where it applies): guidance.
            guidance(
                rowPath, "field.row.placement",
                "row is allowed only in an eventTicket's auxiliaryFields, but this "
                    + "field is in \(style.key).\(area.key); remove row"
            )
        }
    }

    // MARK: Display limits

    /// Wallet silently drops fields beyond what the layout shows, so these
    /// are warnings. Wallet shows at most 3 header, 1 primary, 4 secondary
    /// and 4 auxiliary fields; a boarding pass 2 primary and 5 auxiliary; a
    /// coupon, store card or generic pass with a square barcode at most 4
    /// secondary and auxiliary fields together.
    mutating func checkDisplayLimits(_ counts: [FieldArea: Int], style: PassStyle, firstBarcode: BarcodeFormat?) {
        // Apple publishes no limits for the poster layout.
        guard style != .posterGeneric else { return }
        let limits: [FieldArea: Int] = [
            .header: 3,
            .primary: style == .boardingPass ? 2 : 1,
            .secondary: 4,
            .auxiliary: style == .boardingPass ? 5 : 4,
        ]
        let styleName = style.pluralName
        for area in FieldArea.allCases {
            guard let limit = limits[area], let count = counts[area], count > limit else { continue }
            warning(
                [.key(style.key), .key(area.key)], "fields.limit",
                "\(style.key).\(area.key) has \(count) fields, but \(styleName) show at most \(limit); the "
                    + "rest are not displayed, so move \(count - limit) to backFields or another area"
            )
        }
        // A square barcode takes the room of one row of fields on these styles.
        if [.coupon, .storeCard, .generic].contains(style), let firstBarcode, firstBarcode.isSquare {
            let together = (counts[.secondary] ?? 0) + (counts[.auxiliary] ?? 0)
            if together > 4 {
                warning(
                    [.key(style.key)], "fields.squareBarcodeLimit",
                    "\(style.key) has \(together) secondary and auxiliary fields, but \(styleName) with a "
                        + "square barcode (\(firstBarcode.rawValue)) show at most 4 of them together; move "
                        + "\(together - 4) to backFields, or use PKBarcodeFormatPDF417"
                )
            }
        }
    }
}

extension JSONValue {
    var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }
}
