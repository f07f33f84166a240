/// A recursive-descent reader of the old-style strings format.
struct StringsParser {
    let scalars: [Unicode.Scalar]
    var index = 0

    /// Where each line starts, to give positions without rescanning the text.
    let lineStarts: [Int]

    init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
        var starts = [0]
        for (i, scalar) in scalars.enumerated()
        where scalar == "\n" || (scalar == "\r" && (i + 1 >= scalars.count || scalars[i + 1] != "\n")) {
            starts.append(i + 1)
        }
        lineStarts = starts
    }

    /// The 1-based line and column of `position`.
    func lineAndColumn(at position: Int) -> (Int, Int) {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return (low + 1, position - lineStarts[low] + 1)
    }

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
        let (line, column) = lineAndColumn(at: position ?? index)
        return PassStrings.ParseError(line: line, column: column, message: message)
    }

    mutating func parseFile() throws(PassStrings.ParseError) -> [PassStrings.Entry] {
        var entries: [PassStrings.Entry] = []
        while true {
            try skipSpaceAndComments()
            guard index < scalars.count else { return entries }
            let keyPosition = lineAndColumn(at: index)
            let key = try parseQuoted(what: "a key")
            try skipSpaceAndComments()
            guard index < scalars.count, scalars[index] == "=" else {
                throw error("expected '=' after the key \"\(key)\"; write \"key\" = \"value\";")
            }
            index += 1
            try skipSpaceAndComments()
            let valuePosition = lineAndColumn(at: index)
            let value = try parseQuoted(what: "the value of \"\(key)\"")
            try skipSpaceAndComments()
            guard index < scalars.count, scalars[index] == ";" else {
                throw error("expected ';' after the value of \"\(key)\"; every line ends with a semicolon")
            }
            index += 1
            entries.append(
                PassStrings.Entry(
                    key: key, value: value, keyLine: keyPosition.0, keyColumn: keyPosition.1,
                    valueLine: valuePosition.0, valueColumn: valuePosition.1))
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
                    guard index + 1 < scalars.count else {
                        throw error("unterminated /* comment; close it with */", at: start)
                    }
                    if scalars[index] == "*", scalars[index + 1] == "/" {
                        index += 2
                        break
                    }
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
            let isUnicodeEscape =
                scalar == "\\" && index + 1 < scalars.count && (scalars[index + 1] == "U" || scalars[index + 1] == "u")
            if let pending = pendingHighSurrogate, !isUnicodeEscape {
                throw error(loneHighSurrogate, at: pending.position)
            }
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
                    guard (0xDC00...0xDFFF).contains(value) else {
                        throw error(loneHighSurrogate, at: pending.position)
                    }
                    scalarValue = 0x10000 + ((pending.value - 0xD800) << 10) + (value - 0xDC00)
                    pendingHighSurrogate = nil
                } else if (0xD800...0xDBFF).contains(value) {
                    pendingHighSurrogate = (value, escapeStart)
                    continue
                }
                guard let decoded = Unicode.Scalar(scalarValue) else {
                    throw error(
                        "\\U\(String(value, radix: 16, uppercase: true)) is a lone low surrogate, not a character",
                        at: escapeStart)
                }
                text.append(decoded)
            default:
                throw error(
                    "unknown escape \\\(escape); write \\\\ for a backslash, \\\" for a quote, \\n for a line break",
                    at: index - 2)
            }
        }
        return String(text)
    }
}
