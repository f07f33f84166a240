/// Reading and writing `<lang>.lproj/pass.strings`: lines of
/// `"key" = "value";` with `/* */` and `//` comments
/// (pass-format-notes.md, "Localization").
///
/// Written as UTF-16LE with a BOM, the safest choice: Apple's tools write
/// UTF-16 and every reader accepts it, while KDE's reader guesses UTF-16BE
/// for BOM-less text that does not start with ASCII punctuation. Read from
/// UTF-16 (LE or BE, with a BOM, or without one when the zero bytes give
/// the order away) and UTF-8 (with or without a BOM).
public enum PassStrings {
    /// A syntax or encoding problem, at a 1-based line and column.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String

        public init(line: Int, column: Int, message: String) {
            self.line = line
            self.column = column
            self.message = message
        }

        public var description: String { "line \(line), column \(column): \(message)" }
    }

    /// The bytes of a pass.strings file holding `pairs`, in their order: a
    /// UTF-16LE BOM, then one `"key" = "value";` line per pair. `"` and `\`
    /// are escaped, as are line breaks, tabs and other control characters.
    public static func encode(_ pairs: [(key: String, value: String)]) -> [UInt8] {
        var text = ""
        for (key, value) in pairs {
            text += "\"\(escape(key))\" = \"\(escape(value))\";\n"
        }
        var bytes: [UInt8] = [0xFF, 0xFE]
        bytes.reserveCapacity(2 + text.utf16.count * 2)
        for unit in text.utf16 {
            bytes.append(UInt8(unit & 0xFF))
            bytes.append(UInt8(unit >> 8))
        }
        return bytes
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\U" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The `(key, value)` pairs of a pass.strings file, in file order
    /// (a repeated key appears twice; Wallet uses the last).
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> [(key: String, value: String)] {
        var parser = StringsParser(scalars: try decode(bytes))
        return try parser.parseFile()
    }

    /// The text of `bytes` as Unicode scalars, by BOM or by guess.
    static func decode(_ bytes: [UInt8]) throws(ParseError) -> [Unicode.Scalar] {
        if bytes.starts(with: [0xFF, 0xFE]) { return try decodeUTF16(bytes.dropFirst(2), bigEndian: false) }
        if bytes.starts(with: [0xFE, 0xFF]) { return try decodeUTF16(bytes.dropFirst(2), bigEndian: true) }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return try decodeUTF8(bytes.dropFirst(3)) }
        // No BOM: ASCII text in UTF-16 has a zero byte in every pair.
        if bytes.count >= 2, bytes[0] == 0, bytes[1] != 0 { return try decodeUTF16(bytes[...], bigEndian: true) }
        if bytes.count >= 2, bytes[0] != 0, bytes[1] == 0 { return try decodeUTF16(bytes[...], bigEndian: false) }
        return try decodeUTF8(bytes[...])
    }

    static func decodeUTF8(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> [Unicode.Scalar] {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return scalars
            case .error: throw position(of: scalars, "the file is not valid UTF-8 here; save it as UTF-8 or UTF-16")
            }
        }
    }

    static func decodeUTF16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) throws(ParseError) -> [Unicode.Scalar] {
        guard bytes.count % 2 == 0 else {
            throw ParseError(line: 1, column: 1, message: "the file looks like UTF-16 but has an odd number of bytes; it is truncated or not UTF-16")
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let a = UInt16(bytes[index]), b = UInt16(bytes[index + 1])
            units.append(bigEndian ? a << 8 | b : b << 8 | a)
            index += 2
        }
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(units.count)
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return scalars
            case .error: throw position(of: scalars, "the file has an unpaired UTF-16 surrogate here; it is damaged")
            }
        }
    }

    /// An error just after `scalars`, with its line and column.
    static func position(of scalars: [Unicode.Scalar], _ message: String) -> ParseError {
        let (line, column) = StringsParser.lineAndColumn(in: scalars, at: scalars.count)
        return ParseError(line: line, column: column, message: message)
    }
}

/// A recursive-descent reader of the old-style strings format.
struct StringsParser {
    let scalars: [Unicode.Scalar]
    var index = 0

    init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    static func lineAndColumn(in scalars: [Unicode.Scalar], at position: Int) -> (Int, Int) {
        var line = 1
        var column = 1
        var i = 0
        while i < position, i < scalars.count {
            let scalar = scalars[i]
            if scalar == "\n" || (scalar == "\r" && (i + 1 >= scalars.count || scalars[i + 1] != "\n")) {
                line += 1
                column = 1
            } else if scalar != "\r" {
                column += 1
            }
            i += 1
        }
        return (line, column)
    }

    func error(_ message: String, at position: Int? = nil) -> PassStrings.ParseError {
        let (line, column) = Self.lineAndColumn(in: scalars, at: position ?? index)
        return PassStrings.ParseError(line: line, column: column, message: message)
    }

    mutating func parseFile() throws(PassStrings.ParseError) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        while true {
            try skipSpaceAndComments()
            guard index < scalars.count else { return pairs }
            let key = try parseQuoted(what: "a key")
            try skipSpaceAndComments()
            guard index < scalars.count, scalars[index] == "=" else {
                throw error("expected '=' after the key \"\(key)\"; write \"key\" = \"value\";")
            }
            index += 1
            try skipSpaceAndComments()
            let value = try parseQuoted(what: "the value of \"\(key)\"")
            try skipSpaceAndComments()
            guard index < scalars.count, scalars[index] == ";" else {
                throw error("expected ';' after the value of \"\(key)\"; every line ends with a semicolon")
            }
            index += 1
            pairs.append((key, value))
        }
    }

    mutating func skipSpaceAndComments() throws(PassStrings.ParseError) {
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace || scalar == "\u{FEFF}" {
                index += 1
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "*" {
                let start = index
                index += 2
                while true {
                    guard index + 1 < scalars.count else { throw error("unterminated /* comment; close it with */", at: start) }
                    if scalars[index] == "*", scalars[index + 1] == "/" { index += 2; break }
                    index += 1
                }
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "/" {
                while index < scalars.count, scalars[index] != "\n", scalars[index] != "\r" { index += 1 }
            } else {
                return
            }
        }
    }

    mutating func parseQuoted(what: String) throws(PassStrings.ParseError) -> String {
        guard index < scalars.count, scalars[index] == "\"" else {
            let found = index < scalars.count ? "'\(scalars[index])'" : "the end of the file"
            throw error("expected \(what) in double quotes, found \(found)")
        }
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        // A character outside the BMP may be written as two \U escapes (a UTF-16 surrogate pair).
        var pendingHighSurrogate: (value: UInt32, position: Int)?
        let loneHighSurrogate = "a \\U high surrogate (D800–DBFF) must be followed by a \\U low surrogate (DC00–DFFF)"
        while true {
            guard index < scalars.count else { throw error("unterminated string; close it with \"", at: start) }
            let scalar = scalars[index]
            let isUnicodeEscape = scalar == "\\" && index + 1 < scalars.count && (scalars[index + 1] == "U" || scalars[index + 1] == "u")
            if let pending = pendingHighSurrogate, !isUnicodeEscape { throw error(loneHighSurrogate, at: pending.position) }
            index += 1
            if scalar == "\"" { break }
            guard scalar == "\\" else {
                text.append(scalar)
                continue
            }
            guard index < scalars.count else { throw error("unterminated string; close it with \"", at: start) }
            let escape = scalars[index]
            index += 1
            switch escape {
            case "\"", "\\", "'": text.append(escape)
            case "n": text.append("\n")
            case "r": text.append("\r")
            case "t": text.append("\t")
            case "0": text.append("\0")
            case "U", "u":
                let escapeStart = index - 2
                guard index + 4 <= scalars.count, scalars[index..<index + 4].allSatisfy(ASCII.hexDigit),
                      let value = UInt32(String(String.UnicodeScalarView(scalars[index..<index + 4])), radix: 16)
                else { throw error("\\\(escape) must be followed by four hex digits, e.g. \\U00E9", at: escapeStart) }
                index += 4
                var scalarValue = value
                if let pending = pendingHighSurrogate {
                    guard (0xDC00...0xDFFF).contains(value) else { throw error(loneHighSurrogate, at: pending.position) }
                    scalarValue = 0x10000 + ((pending.value - 0xD800) << 10) + (value - 0xDC00)
                    pendingHighSurrogate = nil
                } else if (0xD800...0xDBFF).contains(value) {
                    pendingHighSurrogate = (value, escapeStart)
                    continue
                }
                guard let decoded = Unicode.Scalar(scalarValue) else {
                    throw error("\\U\(String(value, radix: 16, uppercase: true)) is a lone low surrogate, not a character", at: escapeStart)
                }
                text.append(decoded)
            default:
                throw error("unknown escape \\\(escape); write \\\\ for a backslash, \\\" for a quote, \\n for a line break", at: index - 2)
            }
        }
        return String(text)
    }
}
