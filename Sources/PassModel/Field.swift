/// A field's `value` (or `attributedValue`): Wallet accepts a string or a
/// number (pass-format-notes.md, "Fields"). Dates are strings.
public enum FieldValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case number(Double)

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The string as a W3C date, when it is one.
    public var dateValue: W3CDate? {
        guard case .string(let string) = self else { return nil }
        return try? W3CDate(parsing: string)
    }

    /// The value as text; whole numbers without a decimal point.
    public var description: String {
        switch self {
        case .string(let string): return string
        case .number(let number): return JSONValue.format(number)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            throw DecodingError.typeMismatch(FieldValue.self, .init(codingPath: decoder.codingPath, debugDescription: "a field value must be a string or a number"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .number(let number):
            // Whole numbers are written as integers so `42` stays `42`, not `42.0`.
            if let integer = Int(exactly: number) { try container.encode(integer) } else { try container.encode(number) }
        }
    }
}

/// One field of a pass: what Wallet shows in a header, primary, secondary,
/// auxiliary or back area.
public struct Field: Sendable, Hashable, Codable {
    /// Unique across all of the pass's field arrays.
    public var key: String
    public var label: String?
    public var value: FieldValue
    /// Shown instead of `value` on the back of the pass; may hold `<a href>` links only.
    public var attributedValue: FieldValue?
    /// The notification text when the value changes; `%@` stands for the new value.
    public var changeMessage: String?
    public var textAlignment: TextAlignment?
    public var dateStyle: DateStyle?
    public var timeStyle: DateStyle?
    public var ignoresTimeZone: Bool?
    public var isRelative: Bool?
    public var numberStyle: NumberStyle?
    /// ISO 4217 code; the value is then shown as an amount of money.
    public var currencyCode: String?
    public var dataDetectorTypes: [DataDetectorType]?
    /// 0 or 1: the row of an event ticket's auxiliary field.
    public var row: Int?
    public var semantics: JSONValue?

    public init(key: String, label: String? = nil, value: FieldValue) {
        self.key = key
        self.label = label
        self.value = value
    }

    /// The keys of a field, in the order they are written.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case key, label, value, attributedValue, changeMessage, textAlignment
        case dateStyle, timeStyle, ignoresTimeZone, isRelative
        case numberStyle, currencyCode, dataDetectorTypes, row, semantics
    }
}
