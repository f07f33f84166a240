extension JSONValue {
    /// Parses JSON text (RFC 8259, UTF-8; a UTF-8 BOM is skipped), keeping
    /// the order of object keys. Integers that fit in `Int` become `.int`,
    /// other numbers `.double`. A key repeated in one object is an error.
    package init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        self = try JSONSyntaxParser.parse(Array(bytes)).value
    }

    /// Parses JSON text given as a string; see the byte-based initializer.
    package init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// The one JSON parser of passforge: strict RFC 8259, recording the line and
/// column of every value and key. Duplicate keys are an error: with them,
/// which value wins is a guess.
package struct JSONSyntaxParser {
    /// Deeper nesting than this is refused, so hostile input cannot exhaust the stack.
    package static let maximumDepth = 128

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one JSON document.
    package static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONSyntaxNode {
        var parser = JSONSyntaxParser(bytes: bytes)
        return try parser.parseDocument()
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONSyntaxNode {
        // A UTF-8 byte-order mark is tolerated; editors on some systems add it.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else {
            throw failure(.syntax, "unexpected text after the end of the JSON value")
        }
        return value
    }

    private typealias Position = (line: Int, column: Int)

    /// The column last computed, so that a long line (a compact JSON file is
    /// one line) is counted once, not once per value.
    private var columnCache = (index: 0, column: 1)

    private mutating func here() -> Position {
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var (i, column) = columnCache.index >= lineStart && columnCache.index <= index ? columnCache : (lineStart, 1)
        while i < index {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        columnCache = (index, column)
        return (line, column)
    }

    private func failure(_ kind: JSONParseError.Kind, _ message: String, at position: Position? = nil) -> JSONParseError
    {
        var copy = self
        let here = position ?? copy.here()
        return JSONParseError(kind, line: here.line, column: here.column, message: message)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONSyntaxNode {
        guard depth < Self.maximumDepth else {
            throw failure(.tooDeep, "nested deeper than \(Self.maximumDepth) levels")
        }
        guard index < bytes.count else { throw failure(.syntax, "the file ends where a value was expected") }
        let start = here()
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, start: start)
        case UInt8(ascii: "["): return try parseArray(depth: depth, start: start)
        case UInt8(ascii: "\""):
            return JSONSyntaxNode(kind: .scalar(.string(try parseString())), line: start.line, column: start.column)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return JSONSyntaxNode(kind: .scalar(.bool(true)), line: start.line, column: start.column)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return JSONSyntaxNode(kind: .scalar(.bool(false)), line: start.line, column: start.column)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return JSONSyntaxNode(kind: .scalar(.null), line: start.line, column: start.column)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONSyntaxNode(kind: .scalar(try parseNumber()), line: start.line, column: start.column)
        default:
            throw failure(
                .syntax,
                "unexpected character '\(String(decoding: [bytes[index]], as: UTF8.self))' where a value was expected")
        }
    }

    private mutating func expectWord(_ word: String) throws(JSONParseError) {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw failure(.syntax, "expected '\(word)'")
        }
        index += utf8.count
    }

    private mutating func parseObject(depth: Int, start: Position) throws(JSONParseError) -> JSONSyntaxNode {
        index += 1
        var members: [JSONSyntaxNode.Member] = []
        var seen: [String: Position] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return JSONSyntaxNode(kind: .object([]), line: start.line, column: start.column)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure(.syntax, "expected a key in double quotes (a trailing comma is not allowed in JSON)")
            }
            let keyLocation = here()
            let key = try parseString()
            if let first = seen[key] {
                throw failure(
                    .duplicateKey,
                    "key \"\(key)\" appears twice in the same object (first at line \(first.line)); keep one",
                    at: keyLocation)
            }
            seen[key] = keyLocation
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure(.syntax, "expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append(.init(key: key, keyLine: keyLocation.line, keyColumn: keyLocation.column, value: value))
            skipWhitespace()
            guard index < bytes.count else {
                throw failure(.syntax, "the file ends inside an object that starts at line \(start.line)")
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            }
            throw failure(.syntax, "expected ',' or '}' in the object that starts at line \(start.line)")
        }
        return JSONSyntaxNode(kind: .object(members), line: start.line, column: start.column)
    }

    private mutating func parseArray(depth: Int, start: Position) throws(JSONParseError) -> JSONSyntaxNode {
        index += 1
        var elements: [JSONSyntaxNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return JSONSyntaxNode(kind: .array([]), line: start.line, column: start.column)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else {
                throw failure(.syntax, "the file ends inside an array that starts at line \(start.line)")
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                break
            }
            throw failure(.syntax, "expected ',' or ']' in the array that starts at line \(start.line)")
        }
        return JSONSyntaxNode(kind: .array(elements), line: start.line, column: start.column)
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        var isInteger = true
        func digits(_ i: inout Int, _ bytes: [UInt8]) -> Int {
            let begin = i
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            return i - begin
        }
        let firstDigit = index
        guard digits(&index, bytes) > 0 else { throw failure(.syntax, "a number needs digits") }
        // RFC 8259 §6: no leading zeros ("01").
        if bytes[firstDigit] == UInt8(ascii: "0"), index - firstDigit > 1 {
            throw failure(.syntax, "a number cannot start with 0", at: nil)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard digits(&index, bytes) > 0 else { throw failure(.syntax, "a number needs digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits(&index, bytes) > 0 else { throw failure(.syntax, "a number needs digits in its exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw failure(.numberOutOfRange, "number \(text) is out of range")
        }
        return .double(value)
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        let start = here()
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else {
                throw failure(
                    .syntax, "a string that starts at line \(start.line) column \(start.column) is never closed",
                    at: start)
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure(.syntax, "the file ends inside an escape sequence") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw failure(
                                .syntax, "a UTF-16 high surrogate \\u escape must be followed by a low surrogate")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw failure(.syntax, "invalid UTF-16 surrogate pair")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else {
                        throw failure(.syntax, "\\u escape is not a valid character")
                    }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw failure(.syntax, "unknown escape sequence '\\\(String(decoding: [escape], as: UTF8.self))'")
                }
            case 0x0A:
                throw failure(.syntax, "a line break inside a string must be written as \\n")
            case 0..<0x20:
                throw failure(.syntax, "a control character inside a string must be escaped")
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else {
            throw failure(.syntax, "\\u must be followed by four hex digits")
        }
        index += 4
        return value
    }
}
