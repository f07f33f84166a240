/// One field of a pass: what Wallet shows in a header, primary, secondary,
/// auxiliary or back area.
package struct Field: Sendable, Hashable, Codable {
    /// Unique across all of the pass's field arrays.
    package var key: String
    package var label: String?
    package var value: FieldValue
    /// Shown instead of `value` on the back of the pass; may hold `<a href>` links only.
    package var attributedValue: FieldValue?
    /// The notification text when the value changes; `%@` stands for the new value.
    package var changeMessage: String?
    package var textAlignment: TextAlignment?
    package var dateStyle: DateStyle?
    package var timeStyle: DateStyle?
    package var ignoresTimeZone: Bool?
    package var isRelative: Bool?
    package var numberStyle: NumberStyle?
    /// ISO 4217 code; the value is then shown as an amount of money.
    package var currencyCode: String?
    package var dataDetectorTypes: [DataDetectorType]?
    /// 0 or 1: the row of an event ticket's auxiliary field.
    package var row: Int?
    package var semantics: JSONValue?

    package init(key: String, label: String? = nil, value: FieldValue) {
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
