/// Checks an order.json tree against every rule of Apple's order format
/// ("Wallet Orders" › Order and its supporting objects) and reports all
/// problems at once, each with the exact key path, a stable rule id and a
/// message that says what is wrong, what is allowed and what to do — as
/// `PassValidator` does for passes. The format itself is data
/// (`OrderSchema`); this type walks it.
package struct OrderValidator: Sendable {
    package struct Options: Sendable {
        /// The package's other files by name (images, lproj folders, a receipt):
        /// the keys that name a file are checked against them. nil skips
        /// those checks (the files are not known yet).
        package var files: [String: [UInt8]]?
        /// Accept a plain `http://` `webServiceURL`: only development devices talk to such a service
        /// (`--allow-http-web-service`), as for passes.
        package var allowsHTTPWebService: Bool
        /// The moment the order is made or judged, in seconds since 1970: the build's update tag,
        /// `validate`'s now, `inspect`'s `--valid-at`. A `createdAt` after it is an error
        /// (`order.createdAt.future`). nil skips the rule.
        package var checkedAt: Double?

        package init(files: [String: [UInt8]]? = nil, allowsHTTPWebService: Bool = false, checkedAt: Double? = nil) {
            self.files = files
            self.allowsHTTPWebService = allowsHTTPWebService
            self.checkedAt = checkedAt
        }
    }

    package init() {}

    /// All problems of `order`, in document order; empty when it is valid.
    package func validate(_ order: JSONValue, options: Options = .init()) -> [Diagnostic] {
        guard case .object(let root) = order else {
            return [
                .error(
                    at: .root, rule: "json.root",
                    "order.json must be a JSON object ({ … }), but it is "
                        + "\(order.typeName); put the order's keys in one object")
            ]
        }
        var run = OrderValidationRun(options: options)
        run.check(root, as: OrderSchema.order, at: .root)
        run.checkOrderWide(root)
        return run.diagnostics
    }

    /// Every order status, open first: `diff` flags a change that goes back in this list.
    package static let orderStatuses = ["open", "completed", "cancelled"]
    package static let shippingStatuses = OrderSchema.shippingStatuses
    package static let pickupStatuses = OrderSchema.pickupStatuses
}

/// The state of one order validation.
struct OrderValidationRun {
    let options: OrderValidator.Options
    var diagnostics: [Diagnostic] = []

    init(options: OrderValidator.Options) {
        self.options = options
    }

    mutating func error(_ path: JSONPath, _ rule: String, _ message: String) {
        diagnostics.append(.error(at: path, rule: rule, message))
    }

    mutating func warning(_ path: JSONPath, _ rule: String, _ message: String) {
        diagnostics.append(.warning(at: path, rule: rule, message))
    }

    /// The object's keys: required ones present, each value of its kind, unknown keys named.
    mutating func check(_ object: JSONObject, as schema: OrderObjectSchema, at path: JSONPath) {
        for key in schema.keys {
            guard let value = object[key.name], value != .null else {
                if key.isRequired {
                    error(
                        path.appending(key.name), "order.key.required",
                        "\(place(schema, path)) has no \(key.name), which Apple's order format "
                            + "requires; add \"\(key.name)\": \(example(key.value))")
                }
                continue
            }
            check(value, as: key.value, at: path.appending(key.name), in: schema)
        }
        for key in object.keys where !schema.knownKeys.contains(key) {
            var message =
                "unknown key \"\(key)\" in \(place(schema, path)) is not part of "
                + "Apple's order format; it is passed through as is"
            if let nearest = Spelling.nearest(to: key, in: schema.knownKeys) {
                message += ". Did you mean \"\(nearest)\"? Rename it if so"
            } else {
                message += "; remove it if it is a mistake"
            }
            warning(path.appending(key), "unknown-key", message)
        }
    }

    mutating func check(
        _ value: JSONValue, as schema: OrderValueSchema, at path: JSONPath, in parent: OrderObjectSchema
    ) {
        switch schema {
        case .text:
            _ = expect(value, .string, at: path)
        case .number(let range):
            guard expect(value, .number, at: path), let number = value.numberValue, let range else { return }
            if !range.contains(number) {
                let rule = path.lastKey == "schemaVersion" ? "order.schemaVersion" : "order.number.range"
                let allowed =
                    range.lowerBound == range.upperBound
                    ? "must be \(JSONValue.format(range.lowerBound))"
                    : "must be between \(JSONValue.format(range.lowerBound)) and \(JSONValue.format(range.upperBound))"
                error(path, rule, "\(path) is \(JSONValue.format(number)), but it \(allowed)")
            }
        case .boolean:
            _ = expect(value, .boolean, at: path)
        case .textOfLength, .url, .dateTime, .duration, .choice, .countryCode, .currencyCode, .decimalAmount, .image,
            .file:
            guard let text = string(value, at: path) else { return }
            checkText(text, as: schema, at: path)
        case .object(let schema):
            guard expect(value, .object, at: path), let object = value.objectValue else { return }
            check(object, as: schema, at: path)
        case .array(let element):
            guard expect(value, .array, at: path), let items = value.arrayValue else { return }
            for (index, item) in items.enumerated() { check(item, as: element, at: path.appending(index), in: parent) }
        case .fulfillment:
            guard expect(value, .object, at: path), let object = value.objectValue else { return }
            checkFulfillment(object, at: path)
        }
    }

    /// The rules of a value that is text of a format: a length, a URL, a date-time, a code, an amount, a file.
    mutating func checkText(_ text: String, as schema: OrderValueSchema, at path: JSONPath) {
        switch schema {
        case .textOfLength(let minimum):
            if text.count < minimum {
                error(
                    path, "order.\(path.lastKey).length",
                    "\(path) has \(text.count) characters; Apple requires at least "
                        + "\(minimum). Use a longer, random value")
            }
        case .url:
            checkURL(text, at: path)
        case .dateTime:
            if !OrderValueFormats.isRFC3339DateTime(text) {
                error(
                    path, "order.date",
                    "\(path) is \(quoted(text)), which is not an RFC 3339 date-time; write it with seconds and a time "
                        + "zone, e.g. 2026-11-25T09:30:00Z or 2026-11-25T10:30:00+01:00")
            }
        case .duration:
            if !OrderValueFormats.isISO8601Duration(text) {
                error(
                    path, "order.duration",
                    "\(path) is \(quoted(text)), which is not an ISO 8601 duration; write it like PT2H (two hours) "
                        + "or P1DT12H")
            }
        case .choice(let allowed):
            guard !allowed.contains(text) else { return }
            var message =
                "\(path) is \(quoted(text)), but Apple allows only "
                + allowed.map { "\"\($0)\"" }.joined(separator: ", ")
            if let nearest = Spelling.nearest(to: text, in: allowed) { message += ". Did you mean \"\(nearest)\"?" }
            error(path, path.lastKey == "fulfillmentType" ? "order.fulfillmentType" : "order.enum", message)
        case .countryCode:
            if !OrderValueFormats.isCountryCode(text) {
                error(
                    path, "order.countryCode",
                    "\(path) is \(quoted(text)); write the ISO 3166-1 two-letter "
                        + "code in capitals, e.g. \"US\" or \"DE\"")
            }
        case .currencyCode:
            checkCurrencyCode(text, at: path)
        case .decimalAmount:
            if !OrderValueFormats.isDecimalAmount(text) {
                error(
                    path, "order.amount",
                    "\(path) is \(quoted(text)); Apple wants the amount as a decimal number in a string, e.g. "
                        + "\"42.50\" (a dot, no currency sign, no thousands separator)")
            }
        case .image:
            checkImage(named: text, at: path)
        case .file:
            guard let files = options.files else { return }
            if files[text] == nil {
                error(
                    path, "order.file",
                    "\(path) names \(quoted(text)), but the order has no such file; add it beside order.json or fix "
                        + "the name")
            }
        case .text, .number, .boolean, .object, .array, .fulfillment:
            break
        }
    }

    mutating func checkCurrencyCode(_ text: String, at path: JSONPath) {
        guard !OrderValueFormats.currencySet.contains(text) else { return }
        var message =
            "\(path) is \(quoted(text)), which is not an ISO 4217 currency code; write the three capitals, "
            + "e.g. \"USD\" or \"EUR\""
        if let nearest = Spelling.nearest(to: text.uppercased(), in: OrderValueFormats.currencyCodes) {
            message += ". Did you mean \"\(nearest)\"?"
        }
        error(path, "order.currency", message)
    }

    /// A fulfillment is checked as the kind its `fulfillmentType` names.
    mutating func checkFulfillment(_ object: JSONObject, at path: JSONPath) {
        switch object["fulfillmentType"]?.stringValue {
        case "shipping": check(object, as: OrderSchema.shippingFulfillment, at: path)
        case "pickup": check(object, as: OrderSchema.pickupFulfillment, at: path)
        case let other:
            let found = other.map { "is \(quoted($0))" } ?? "is missing"
            error(
                path.appending("fulfillmentType"), "order.fulfillmentType",
                "\(path.appending("fulfillmentType")) \(found); a fulfillment is \"shipping\" (ShippingFulfillment) "
                    + "or \"pickup\" (PickupFulfillment)")
        }
    }

    /// Rules across keys of the order.
    mutating func checkOrderWide(_ root: JSONObject) {
        checkCreatedAtIsPast(root)
        if let created = root["createdAt"]?.stringValue, let updated = root["updatedAt"]?.stringValue,
            let createdDate = try? W3CDate(parsing: created), let updatedDate = try? W3CDate(parsing: updated),
            OrderValueFormats.isRFC3339DateTime(created), OrderValueFormats.isRFC3339DateTime(updated),
            updatedDate.secondsSince1970 < createdDate.secondsSince1970
        {
            error(
                ["updatedAt"], "order.updatedAt",
                "updatedAt (\(updated)) is before createdAt (\(created)); Apple requires "
                    + "updatedAt to equal createdAt at first and only increase")
        }
        // Apple: authenticationToken is required when the order has a web service.
        if root["webServiceURL"] != nil, root["authenticationToken"] == nil {
            error(
                ["authenticationToken"], "order.authenticationToken",
                "the order has a webServiceURL but no authenticationToken; add one of at least 16 "
                    + "characters (passforge derives it when the build sets it)")
        }
        if let total = root["payment"]?["total"]?.objectValue, let currency = total["currency"]?.stringValue {
            checkPrecision(of: total, at: ["payment", "total"], currency: currency)
        }
    }

    /// Apple's Order page: updatedAt "should equal createdAt if the order hasn't had any updates", and it must
    /// only increase. An order created after the moment it is made would be given an updatedAt before its
    /// createdAt by its first update (the build sets updatedAt to its update tag's time), which `inspect` calls a
    /// defect; so `build`, `validate` and `inspect` all refuse a createdAt in the future, here.
    mutating func checkCreatedAtIsPast(_ root: JSONObject) {
        guard let checkedAt = options.checkedAt, let created = root["createdAt"]?.stringValue,
            OrderValueFormats.isRFC3339DateTime(created), let date = try? W3CDate(parsing: created),
            date.secondsSince1970 > checkedAt
        else { return }
        error(
            ["createdAt"], "order.createdAt.future",
            "createdAt (\(created)) is later than "
                + "\(OrderValueFormats.rfc3339(secondsSince1970: checkedAt)), when the "
                + "order is "
                + "built or checked; Apple's updatedAt equals createdAt at first and "
                + "then only increases, so an order cannot be "
                + "created in the future. Set createdAt to when the customer placed the order")
    }

    mutating func checkPrecision(of amount: JSONObject, at path: JSONPath, currency: String) {
        guard let text = amount["amount"]?.stringValue, OrderValueFormats.isDecimalAmount(text),
            OrderValueFormats.currencySet.contains(currency)
        else { return }
        let allowed = OrderValueFormats.minorUnits(of: currency)
        if OrderValueFormats.fractionDigits(text) > allowed {
            warning(
                path.appending("amount"), "order.amount.precision",
                "\(path.appending("amount")) is \"\(text)\", with more decimals than \(currency) "
                    + "has (\(allowed)); Wallet shows amounts as given, so round it")
        }
    }

    /// An image key names an image by its name (`"logo"`) or file name
    /// (`"logo.png"`); some PNG or JPEG of that name must be in the package
    /// (at its top level or in an lproj folder), 300 × 300 pixels by Apple's
    /// guidance for logos and product images.
    mutating func checkImage(named name: String, at path: JSONPath) {
        guard let files = options.files else { return }
        let stem =
            name.lowercased().hasSuffix(".png") || name.lowercased().hasSuffix(".jpg")
                || name.lowercased().hasSuffix(".jpeg")
            ? String(name[..<name.lastIndex(of: ".")!]) : name
        let matches = files.keys.filter { file in
            let parts = file.split(separator: "/")
            guard parts.count == 1 || (parts.count == 2 && parts[0].hasSuffix(".lproj")), let base = parts.last,
                let dot = base.lastIndex(of: ".")
            else { return false }
            var baseStem = String(base[..<dot])
            for scale in ["@2x", "@3x"] where baseStem.hasSuffix(scale) { baseStem.removeLast(scale.count) }
            return baseStem == stem && ["png", "jpg", "jpeg"].contains(base[base.index(after: dot)...].lowercased())
        }.sorted()
        guard !matches.isEmpty else {
            error(
                path, "order.image",
                "\(path) names the image \(quoted(name)), but the order has no \(stem).png "
                    + "or \(stem).jpg (or @2x/@3x); add it beside order.json")
            return
        }
        for file in matches {
            let bytes = files[file] ?? []
            guard let size = OrderImageSize(bytes: bytes) else {
                error(
                    path, "order.image",
                    "\(file) (named by \(path)) is not a PNG or JPEG image; export it as PNG or JPEG")
                continue
            }
            if size.width != size.height || size.width < 300 {
                warning(
                    path, "order.image.size",
                    "\(file) is \(size.width) × \(size.height) pixels; Apple asks for a square "
                        + "image of 300 × 300 pixels on an opaque background")
            }
        }
    }

    // MARK: Types

    mutating func expect(_ value: JSONValue, _ kind: JSONKind, at path: JSONPath) -> Bool {
        if kind.matches(value) { return true }
        error(path, "key.type", ValidationRun.typeMessage(path: path, expected: kind, found: value))
        return false
    }

    mutating func string(_ value: JSONValue, at path: JSONPath) -> String? {
        expect(value, .string, at: path) ? value.stringValue : nil
    }

    func place(_ schema: OrderObjectSchema, _ path: JSONPath) -> String {
        path.isEmpty ? "the order" : "the \(schema.name) at \(path)"
    }

    func quoted(_ text: String) -> String {
        let excerpt = text.count > 60 ? String(text.prefix(57)) + "…" : text
        return "\"\(excerpt)\""
    }

    func example(_ value: OrderValueSchema) -> String {
        switch value {
        case .text, .textOfLength: "\"…\""
        case .number: "a number"
        case .boolean: "true or false"
        case .url: "\"https://…\""
        case .dateTime: "\"2026-11-25T09:30:00Z\""
        case .duration: "\"PT2H\""
        case .choice(let allowed): allowed.map { "\"\($0)\"" }.joined(separator: " or ")
        case .countryCode: "\"US\""
        case .currencyCode: "\"USD\""
        case .decimalAmount: "\"42.50\""
        case .image: "\"logo\" (with logo.png in the order)"
        case .file: "\"receipt.pdf\""
        case .object(let schema): "{ … } (a \(schema.name))"
        case .array: "[ … ]"
        case .fulfillment: "{ \"fulfillmentType\": \"shipping\", … }"
        }
    }
}

/// The pixel size of a PNG or JPEG, read from its header (no decoding).
struct OrderImageSize {
    var width: Int
    var height: Int

    init?(bytes: [UInt8]) {
        if let png = try? PNGImageInfo(bytes: bytes) {
            width = png.width
            height = png.height
            return
        }
        // JPEG: FF D8, then segments; a start-of-frame (SOF0…SOF15 but DHT C4, JPG C8, DAC CC) holds the size.
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {
                index += 1
                continue
            }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }
}

extension JSONPath {
    /// The last key of the path ("" when it ends in an index or is the root).
    var lastKey: String {
        if case .key(let key)? = components.last { return key }
        return ""
    }
}
