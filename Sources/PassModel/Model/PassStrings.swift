/// Reading and writing `<lang>.lproj/pass.strings`: lines of
/// `"key" = "value";` with `/* */` and `//` comments
/// (Apple's PassKit Package Format Reference).
///
/// Written as UTF-16LE with a BOM, the safest choice: Apple's tools write
/// UTF-16 and every reader accepts it, while KDE's reader guesses UTF-16BE
/// for BOM-less text that does not start with ASCII punctuation. Read from
/// UTF-16 (LE or BE, with a BOM, or without one when the zero bytes give
/// the order away) and UTF-8 (with or without a BOM).
package enum PassStrings {
    /// A syntax or encoding problem, at a 1-based line and column.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        package var line: Int
        package var column: Int
        package var message: String

        package init(line: Int, column: Int, message: String) {
            self.line = line
            self.column = column
            self.message = message
        }

        package var description: String { "line \(line), column \(column): \(message)" }
    }

    /// One `"key" = "value";` line, with where its key and value start
    /// (1-based; the value's position is its opening quote).
    package struct Entry: Sendable, Hashable {
        package var key: String
        package var value: String
        package var keyLine: Int
        package var keyColumn: Int
        package var valueLine: Int
        package var valueColumn: Int

        package init(
            key: String, value: String, keyLine: Int = 0, keyColumn: Int = 0, valueLine: Int = 0, valueColumn: Int = 0
        ) {
            self.key = key
            self.value = value
            self.keyLine = keyLine
            self.keyColumn = keyColumn
            self.valueLine = valueLine
            self.valueColumn = valueColumn
        }
    }

    /// The bytes of a pass.strings file holding `pairs`, in their order: a
    /// UTF-16LE BOM, then one `"key" = "value";` line per pair. `"` and `\`
    /// are escaped, as are line breaks, tabs and other control characters.
    package static func encode(_ pairs: [(key: String, value: String)]) -> [UInt8] {
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
    package static func parse(_ bytes: [UInt8]) throws(ParseError) -> [(key: String, value: String)] {
        try entries(bytes).map { ($0.key, $0.value) }
    }

    /// The lines of a pass.strings file, in file order, with their positions.
    package static func entries(_ bytes: [UInt8]) throws(ParseError) -> [Entry] {
        var parser = StringsParser(scalars: try decode(bytes))
        return try parser.parseFile()
    }

    /// The table Wallet looks labels and values up in: the last value of each key wins.
    package static func table(_ bytes: [UInt8]) throws(ParseError) -> [String: String] {
        var table: [String: String] = [:]
        for entry in try entries(bytes) { table[entry.key] = entry.value }
        return table
    }

    /// The tables of every `<lang>.lproj/pass.strings` among `files` (name
    /// and bytes), by language; a file that does not parse is left out (it
    /// is reported where it is read).
    package static func tables(of files: some Sequence<(name: String, bytes: [UInt8])>) -> [String: [String: String]] {
        var tables: [String: [String: String]] = [:]
        for file in files where file.name.hasSuffix("/pass.strings") {
            guard let language = language(ofPath: file.name), let table = try? table(file.bytes) else { continue }
            tables[language] = table
        }
        return tables
    }

    /// The language of a `<lang>.lproj/…` path (`de`, `pt-BR`), or nil.
    package static func language(ofPath path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasSuffix(".lproj"), parts[0].count > ".lproj".count else { return nil }
        return String(parts[0].dropLast(".lproj".count))
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
            throw ParseError(
                line: 1, column: 1,
                message: "the file looks like UTF-16 but has an odd number of bytes; it is truncated or not UTF-16")
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let a = UInt16(bytes[index])
            let b = UInt16(bytes[index + 1])
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
