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
