import PassModel
import Yams

/// Reads YAML (1.1 scalars, as editors expect) into a `SourceNode` with the
/// line and column of every value.
///
/// Scalars keep their written text unless YAML types them: `14C` stays a
/// string, `42` is a number, `true` a boolean. A timestamp such as
/// `2026-12-01T09:30:00Z` stays the string as written, because pass.json
/// wants ISO-8601 text, not a re-formatted date.
public enum YAMLSourceParser {
    /// More values than this in one file is refused: aliases can make a
    /// small file expand to billions of values ("billion laughs").
    public static let maximumNodeCount = 2_000_000

    public static func parse(_ bytes: [UInt8], file: String, maximumNodeCount: Int = maximumNodeCount) throws(ContentDiagnostic) -> SourceNode {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .error(at: SourceLocation(file: file), rule: "yaml.encoding",
                         "the file is not valid UTF-8; save it as UTF-8")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw diagnostic(for: error, file: file)
        } catch {
            throw .error(at: SourceLocation(file: file), rule: "yaml.syntax", "invalid YAML: \(error)")
        }
        guard let root else {
            throw .error(at: SourceLocation(file: file, line: 1, column: 1), rule: "yaml.empty", "the file is empty; it must define a pass")
        }
        var count = 0
        return try convert(root, file: file, count: &count, limit: maximumNodeCount)
    }

    private static func location(_ mark: Mark?, _ file: String) -> SourceLocation {
        SourceLocation(file: file, line: mark?.line ?? 0, column: mark?.column ?? 0)
    }

    private static func convert(_ node: Node, file: String, count: inout Int, limit: Int) throws(ContentDiagnostic) -> SourceNode {
        count += 1
        guard count <= limit else {
            throw .error(at: location(node.mark, file), rule: "yaml.size", "the file has more than \(limit) values (aliases included); split it")
        }
        let here = location(node.mark, file)
        switch node {
        case .scalar(let scalar):
            return .scalar(value(of: scalar, node: node), at: here)
        case .sequence(let sequence):
            var elements: [SourceNode] = []
            elements.reserveCapacity(sequence.count)
            for element in sequence { elements.append(try convert(element, file: file, count: &count, limit: limit)) }
            return SourceNode(.array(elements), at: here)
        case .mapping(let mapping):
            var members: [SourceNode.Member] = []
            var seen: [String: Int] = [:]
            for (keyNode, valueNode) in mapping {
                let keyLocation = location(keyNode.mark, file)
                guard case .scalar(let keyScalar) = keyNode else {
                    throw .error(at: keyLocation, rule: "yaml.key", "a key must be plain text, not a list or a map")
                }
                let key = keyScalar.string
                if let firstLine = seen[key] {
                    throw .error(at: keyLocation, rule: "yaml.duplicate-key",
                                 "key \"\(key)\" appears twice in the same map (first at line \(firstLine)); keep one")
                }
                seen[key] = keyLocation.line
                members.append(.init(key: key, keyLocation: keyLocation, value: try convert(valueNode, file: file, count: &count, limit: limit)))
            }
            return SourceNode(.object(members), at: here)
        case .alias:
            throw .error(at: here, rule: "yaml.alias", "unresolved YAML alias; define the anchor (&name) before using it")
        }
    }

    private static func value(of scalar: Node.Scalar, node: Node) -> JSONValue {
        // Quoted scalars are always strings: "0042" stays "0042".
        if scalar.style == .singleQuoted || scalar.style == .doubleQuoted || scalar.style == .literal || scalar.style == .folded {
            return .string(scalar.string)
        }
        switch node.tag.rawValue {
        case Tag.Name.null.rawValue: return .null
        case Tag.Name.bool.rawValue: return node.bool.map(JSONValue.bool) ?? .string(scalar.string)
        case Tag.Name.int.rawValue: return node.int.map(JSONValue.int) ?? .string(scalar.string)
        case Tag.Name.float.rawValue:
            if let double = node.float, double.isFinite { return .double(double) }
            return .string(scalar.string)
        default: return .string(scalar.string)
        }
    }

    private static func diagnostic(for error: YamlError, file: String) -> ContentDiagnostic {
        func at(_ mark: Mark, _ problem: String, _ context: YamlError.Context?) -> ContentDiagnostic {
            var message = "invalid YAML: \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line))" }
            return .error(at: location(mark, file), rule: "yaml.syntax", message + "; check indentation and quoting")
        }
        switch error {
        case let .scanner(context, problem, mark, _): return at(mark, problem, context)
        case let .parser(context, problem, mark, _): return at(mark, problem, context)
        case let .composer(context, problem, mark, _): return at(mark, problem, context)
        case let .duplicatedKeysInMapping(duplicates, context):
            return .error(at: location(context.mark, file), rule: "yaml.duplicate-key",
                          "keys \(duplicates.joined(separator: ", ")) appear twice in the same map; keep one")
        case let .reader(problem, _, _, _):
            return .error(at: SourceLocation(file: file), rule: "yaml.encoding", "cannot read the file: \(problem)")
        default:
            return .error(at: SourceLocation(file: file), rule: "yaml.syntax", "invalid YAML: \(error)")
        }
    }
}

/// Chooses the parser by file extension: `.json` is strict JSON, everything else YAML.
public enum SourceParser {
    public static func parse(_ bytes: [UInt8], file: String) throws(ContentDiagnostic) -> SourceNode {
        if file.hasSuffix(".json") { return try JSONSourceParser.parse(bytes, file: file) }
        return try YAMLSourceParser.parse(bytes, file: file)
    }
}
