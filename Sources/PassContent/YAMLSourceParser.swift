import PassModel
import Yams

/// Reads YAML into a `SourceNode` with the line and column of every value.
///
/// Plain scalars are typed by the YAML 1.2 core schema: `42` and `9.5` are
/// numbers, `true`/`false` booleans, `~`/`null` null, everything else text.
/// Unlike YAML 1.1, `NO`, `yes` or `on` stay text (a country code `NO` must
/// not become `false`), and a timestamp such as `2026-12-01T09:30:00Z` stays
/// the string as written, because pass.json wants ISO-8601 text.
package enum YAMLSourceParser {
    /// More values than this in one file is refused: aliases can make a
    /// small file expand to billions of values ("billion laughs").
    package static let maximumNodeCount = 2_000_000

    /// Lines of a part of a file parsed on its own (see `ContentLoader.definitions(in:excerpt:)`):
    /// from line `from` of the part on, each line is `by` lines further down in the file.
    package struct LineShift: Sendable, Equatable {
        package var from: Int
        package var by: Int

        package init(from: Int, by: Int) {
            self.from = from
            self.by = by
        }

        func line(_ line: Int) -> Int { line >= from ? line + by : line }
    }

    /// Where the nodes of one parse are: their file, and the shift of their lines.
    private struct Place {
        var file: String
        var shift: LineShift?
    }

    package static func parse(
        _ bytes: [UInt8], file: String, maximumNodeCount: Int = maximumNodeCount,
        lineShift: LineShift? = nil
    ) throws(ContentDiagnostic) -> SourceNode {
        let place = Place(file: file, shift: lineShift)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .error(
                at: position(ofByte: firstInvalidUTF8Byte(bytes), in: bytes, file: file), rule: "yaml.encoding",
                "the file is not valid UTF-8 here; save it as UTF-8")
        }
        let root: Node?
        do {
            // The basic resolver tags nothing; typing plain scalars here is faster than
            // Yams's regular expressions and follows YAML 1.2 (see above). The constructor (Swift
            // values from nodes) is never used, and the encoding is given: Yams's defaults build
            // their type maps and read the whole process environment (YAMS_DEFAULT_ENCODING) on
            // every call, which took 3.5% of a full build's CPU.
            root = try Yams.compose(yaml: text, .basic, Constructor([:], [:], [:]), .utf8)
        } catch let error as YamlError {
            throw diagnostic(for: error, place: place, bytes: bytes)
        } catch {
            throw .error(
                at: SourceLocation(file: file, line: 1, column: 1), rule: "yaml.syntax", "invalid YAML: \(error)")
        }
        guard let root else {
            throw .error(
                at: SourceLocation(file: file, line: 1, column: 1), rule: "yaml.empty",
                "the file is empty; it must define a pass")
        }
        var count = 0
        return try convert(root, place: place, count: &count, limit: maximumNodeCount)
    }

    private static func location(_ mark: Mark?, _ place: Place) -> SourceLocation {
        let line = max(mark?.line ?? 1, 1)
        return SourceLocation(
            file: place.file, line: place.shift?.line(line) ?? line, column: max(mark?.column ?? 1, 1))
    }

    /// The offset of the first byte that is not part of valid UTF-8.
    static func firstInvalidUTF8Byte(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return offset
            case .error: return offset
            }
        }
    }

    /// The 1-based line and column (in bytes) of a byte offset.
    static func position(ofByte offset: Int, in bytes: [UInt8], file: String) -> SourceLocation {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return SourceLocation(file: file, line: line, column: offset - lineStart + 1)
    }

    private static func convert(_ node: Node, place: Place, count: inout Int, limit: Int) throws(ContentDiagnostic)
        -> SourceNode
    {
        count += 1
        guard count <= limit else {
            throw .error(
                at: location(node.mark, place), rule: "yaml.size",
                "the file has more than \(limit) values (aliases included); split it")
        }
        let here = location(node.mark, place)
        switch node {
        case .scalar(let scalar):
            return .scalar(value(of: scalar, node: node), at: here)
        case .sequence(let sequence):
            var elements: [SourceNode] = []
            elements.reserveCapacity(sequence.count)
            for element in sequence { elements.append(try convert(element, place: place, count: &count, limit: limit)) }
            return SourceNode(.array(elements), at: here)
        case .mapping(let mapping):
            var members: [SourceNode.Member] = []
            var seen: [String: Int] = [:]
            for (keyNode, valueNode) in mapping {
                let keyLocation = location(keyNode.mark, place)
                guard case .scalar(let keyScalar) = keyNode else {
                    throw .error(at: keyLocation, rule: "yaml.key", "a key must be plain text, not a list or a map")
                }
                let key = keyScalar.string
                if let firstLine = seen[key] {
                    throw .error(
                        at: keyLocation, rule: "yaml.duplicate-key",
                        "key \"\(key)\" appears twice in the same map (first at line \(firstLine)); keep one")
                }
                seen[key] = keyLocation.line
                members.append(
                    .init(
                        key: key, keyLocation: keyLocation,
                        value: try convert(valueNode, place: place, count: &count, limit: limit)))
            }
            return SourceNode(.object(members), at: here)
        case .alias:
            throw .error(
                at: here, rule: "yaml.alias", "unresolved YAML alias; define the anchor (&name) before using it")
        }
    }

    private static func value(of scalar: Node.Scalar, node: Node) -> JSONValue {
        // Quoted and block scalars are always strings: "0042" stays "0042".
        guard scalar.style == .plain || scalar.style == .any else { return .string(scalar.string) }
        return coreSchemaValue(scalar.string)
    }

    /// YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
    static func coreSchemaValue(_ text: String) -> JSONValue {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        let bytes = Array(text.utf8)
        guard let first = bytes.first,
            first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
        else { return .string(text) }
        let isDigit = { (b: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
        let body = first == UInt8(ascii: "-") || first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
        if !body.isEmpty, body.allSatisfy(isDigit) {
            return Int(first == UInt8(ascii: "+") ? String(text.dropFirst()) : text).map(JSONValue.int) ?? .string(text)
        }
        if text.hasPrefix("0x"), let value = Int(text.dropFirst(2), radix: 16) { return .int(value) }
        if text.hasPrefix("0o"), let value = Int(text.dropFirst(2), radix: 8) { return .int(value) }
        // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
        var index = body.startIndex
        var mantissaDigits = 0
        while index < body.endIndex, isDigit(body[index]) {
            index += 1
            mantissaDigits += 1
        }
        if index < body.endIndex, body[index] == UInt8(ascii: ".") {
            index += 1
            while index < body.endIndex, isDigit(body[index]) {
                index += 1
                mantissaDigits += 1
            }
        }
        guard mantissaDigits > 0 else { return .string(text) }
        if index < body.endIndex, body[index] == UInt8(ascii: "e") || body[index] == UInt8(ascii: "E") {
            index += 1
            if index < body.endIndex, body[index] == UInt8(ascii: "-") || body[index] == UInt8(ascii: "+") {
                index += 1
            }
            let exponentStart = index
            while index < body.endIndex, isDigit(body[index]) { index += 1 }
            guard index > exponentStart else { return .string(text) }
        }
        guard index == body.endIndex, let value = Double(text), value.isFinite else { return .string(text) }
        return .double(value)
    }

    private static func diagnostic(for error: YamlError, place: Place, bytes: [UInt8]) -> ContentDiagnostic {
        let file = place.file
        func at(_ mark: Mark, _ problem: String, _ context: YamlError.Context?) -> ContentDiagnostic {
            var message = "invalid YAML: \(problem)"
            if let context {
                message += " (\(context.text) at line \(place.shift?.line(context.mark.line) ?? context.mark.line))"
            }
            return .error(at: location(mark, place), rule: "yaml.syntax", message + "; check indentation and quoting")
        }
        switch error {
        case .scanner(let context, let problem, let mark, _): return at(mark, problem, context)
        case .parser(let context, let problem, let mark, _): return at(mark, problem, context)
        case .composer(let context, let problem, let mark, _): return at(mark, problem, context)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return .error(
                at: location(context.mark, place), rule: "yaml.duplicate-key",
                "keys \(duplicates.joined(separator: ", ")) appear twice in the same map; keep one")
        case .reader(let problem, let offset, let value, _):
            // Control characters (a NUL byte, say) are not allowed in YAML.
            let character = value >= 0 ? " (character U+\(String(value, radix: 16, uppercase: true)))" : ""
            return .error(
                at: position(ofByte: offset ?? 0, in: bytes, file: file), rule: "yaml.encoding",
                "cannot read the file here: \(problem)\(character); remove the character "
                    + "or write it as an escape in a double-quoted string")
        default:
            return .error(
                at: SourceLocation(file: file, line: 1, column: 1), rule: "yaml.syntax", "invalid YAML: \(error)")
        }
    }
}
