/// A field's `value` (or `attributedValue`): Wallet accepts a string or a
/// number ("Pass.PassFieldContent" in Apple's Wallet Passes documentation).
/// Dates are strings.
package enum FieldValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case number(Double)

    package var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    package var numberValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The string as a W3C date, when it is one.
    package var dateValue: W3CDate? {
        guard case .string(let string) = self else { return nil }
        return try? W3CDate(parsing: string)
    }

    /// The value as text; whole numbers without a decimal point.
    package var description: String {
        switch self {
        case .string(let string): return string
        case .number(let number): return JSONValue.format(number)
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            throw DecodingError.typeMismatch(
                FieldValue.self,
                .init(codingPath: decoder.codingPath, debugDescription: "a field value must be a string or a number"))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .number(let number):
            // Whole numbers are written as integers so `42` stays `42`, not `42.0`.
            if let integer = Int(exactly: number) {
                try container.encode(integer)
            } else {
                try container.encode(number)
            }
        }
    }
}
