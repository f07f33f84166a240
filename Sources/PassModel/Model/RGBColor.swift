/// A pass colour, written `rgb(r, g, b)` with each component 0–255
/// (`backgroundColor`, `foregroundColor`, `labelColor`). Wallet reads no
/// other notation.
package struct RGBColor: Sendable, Hashable, Codable, CustomStringConvertible {
    package var red: Int
    package var green: Int
    package var blue: Int

    package init(red: Int, green: Int, blue: Int) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Reads `rgb(r, g, b)`; spaces around the numbers are allowed. Returns
    /// `nil` for anything else, including components outside 0–255.
    package init?(parsing text: String) {
        let trimmed = text.trimmingSpaces()
        guard trimmed.hasPrefix("rgb("), trimmed.hasSuffix(")") else { return nil }
        let inner = trimmed.dropFirst(4).dropLast()
        let parts = inner.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces() }
        guard parts.count == 3 else { return nil }
        let values = parts.compactMap { Int($0) }
        guard values.count == 3, values.allSatisfy({ (0...255).contains($0) }) else { return nil }
        self.init(red: values[0], green: values[1], blue: values[2])
    }

    /// Reads `#rrggbb` or `#rgb`, the notation people most often write by
    /// mistake, so a message can offer the `rgb(…)` equivalent.
    static func fromHex(_ text: String) -> RGBColor? {
        var hex = text.trimmingSpaces()
        guard hex.hasPrefix("#") else { return nil }
        hex.removeFirst()
        if hex.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
        guard hex.count == 6, let value = Int(hex, radix: 16) else { return nil }
        return RGBColor(red: (value >> 16) & 0xFF, green: (value >> 8) & 0xFF, blue: value & 0xFF)
    }

    /// `rgb(r, g, b)`.
    package var description: String { "rgb(\(red), \(green), \(blue))" }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let color = RGBColor(parsing: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not rgb(r, g, b) with components 0–255")
        }
        self = color
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
