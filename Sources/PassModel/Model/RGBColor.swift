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
        guard let color = Self.parseASCII(text) ?? Self.parseCharacters(text) else { return nil }
        self = color
    }

    /// The general reading, character by character (any Unicode white space around the numbers).
    static func parseCharacters(_ text: String) -> RGBColor? {
        let trimmed = text.trimmingSpaces()
        guard trimmed.hasPrefix("rgb("), trimmed.hasSuffix(")") else { return nil }
        let inner = trimmed.dropFirst(4).dropLast()
        let parts = inner.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces() }
        guard parts.count == 3 else { return nil }
        let values = parts.compactMap { Int($0) }
        guard values.count == 3, values.allSatisfy({ (0...255).contains($0) }) else { return nil }
        return RGBColor(red: values[0], green: values[1], blue: values[2])
    }

    /// The same reading over the bytes of an ASCII text, which every pass's colours are: the
    /// character-by-character one costs as much as the rest of a colour check. `.none` when
    /// `text` is not ASCII (read it with `parseCharacters`), `.some(nil)` when it is no colour.
    static func parseASCII(_ text: String) -> RGBColor?? {
        var bytes = text.utf8[...]
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return .none }
        // ASCII white space as Character.isWhitespace sees it: tab, line feed, vertical tab, form feed, return, space.
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        func trim(_ part: inout Substring.UTF8View) {
            while let first = part.first, isSpace(first) { part.removeFirst() }
            while let last = part.last, isSpace(last) { part.removeLast() }
        }
        trim(&bytes)
        guard bytes.starts(with: "rgb(".utf8), bytes.count >= 5, bytes.last == UInt8(ascii: ")") else {
            return .some(nil)
        }
        let inner = bytes.dropFirst(4).dropLast()
        let parts = inner.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .some(nil) }
        var values: [Int] = []
        for part in parts {
            var digits = part
            trim(&digits)
            // What Int(_:) reads: an optional sign, then at least one digit.
            var negative = false
            if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                negative = sign == UInt8(ascii: "-")
                digits.removeFirst()
            }
            guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .some(nil)
            }
            // Leading zeros are allowed; anything past 255 is out of range however long it is.
            let value = digits.reduce(0) { min(1_000, $0 * 10 + Int($1 - UInt8(ascii: "0"))) }
            guard (0...255).contains(negative ? -value : value) else { return .some(nil) }
            values.append(value)
        }
        return .some(RGBColor(red: values[0], green: values[1], blue: values[2]))
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
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not rgb(r, g, b) with components 0–255")
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
        // Most texts start and end with a printable ASCII character: nothing to trim, nothing to copy.
        // (A byte at or below space may be white space; one at or above 0x80 is part of a non-ASCII character.)
        if let first = utf8.first, let last = utf8.last, (0x21..<0x80).contains(first), (0x21..<0x80).contains(last) {
            return self
        }
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
