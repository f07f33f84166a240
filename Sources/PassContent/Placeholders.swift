import PassModel

/// A template's pass.json with its `{{ path.to.value }}` placeholders parsed
/// once, so rendering ten thousand passes does not re-scan every string.
public struct PlaceholderTemplate: Sendable {
    /// One run of a string: literal text or a placeholder.
    enum Piece: Sendable {
        case literal(String)
        case placeholder(Placeholder)
    }

    struct Placeholder: Sendable {
        /// `passenger.name` → ["passenger", "name"]
        var path: [String]
        var text: String
        var location: SourceLocation
    }

    indirect enum Node: Sendable {
        /// A subtree without placeholders: copied as it is.
        case constant(SourceNode)
        case string([Piece], SourceLocation)
        case array([Node], SourceLocation)
        case object([(key: String, keyLocation: SourceLocation, value: Node)], SourceLocation)
    }

    var root: Node
    /// Every placeholder path in the template, for "unused data" hints and tests.
    public private(set) var paths: [String] = []
    public var hasPlaceholders: Bool { !paths.isEmpty }

    init(root: SourceNode, hasPlaceholders: Bool) {
        self.root = .constant(root)
    }

    /// Parses the placeholders of a whole tree; every malformed one is reported.
    public static func parse(_ source: SourceNode) -> Result<PlaceholderTemplate, ContentErrors> {
        var problems: [ContentDiagnostic] = []
        var paths: [String] = []
        let node = compile(source, problems: &problems, paths: &paths)
        if !problems.isEmpty { return .failure(ContentErrors(problems)) }
        var template = PlaceholderTemplate(root: source, hasPlaceholders: false)
        template.root = node
        template.paths = paths
        return .success(template)
    }

    private static func compile(_ node: SourceNode, problems: inout [ContentDiagnostic], paths: inout [String]) -> Node {
        switch node.kind {
        case .scalar(.string(let text)) where text.contains("{{"):
            return .string(pieces(of: text, at: node.location, problems: &problems, paths: &paths), node.location)
        case .scalar:
            return .constant(node)
        case .array(let elements):
            let compiled = elements.map { compile($0, problems: &problems, paths: &paths) }
            if compiled.allSatisfy({ if case .constant = $0 { true } else { false } }) { return .constant(node) }
            return .array(compiled, node.location)
        case .object(let members):
            let compiled = members.map { (key: $0.key, keyLocation: $0.keyLocation, value: compile($0.value, problems: &problems, paths: &paths)) }
            if compiled.allSatisfy({ if case .constant = $0.value { true } else { false } }) { return .constant(node) }
            return .object(compiled, node.location)
        }
    }

    static func pieces(of text: String, at location: SourceLocation, problems: inout [ContentDiagnostic], paths: inout [String]) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        var offset = 0
        while let open = rest.range(of: "{{") {
            let literal = rest[rest.startIndex..<open.lowerBound]
            if !literal.isEmpty { pieces.append(.literal(String(literal))) }
            offset += literal.count
            // Column of the placeholder: the string's column, +1 for the opening quote.
            let here = SourceLocation(file: location.file, line: location.line,
                                      column: location.column > 0 ? location.column + 1 + offset : 0)
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                problems.append(.error(at: here, rule: "placeholder.unclosed",
                                       "`{{` is never closed with `}}`; write {{ name }}"))
                return pieces
            }
            let inner = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: " \t")
            let raw = String(rest[open.lowerBound..<close.upperBound])
            let path = inner.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let valid = !inner.isEmpty && path.allSatisfy { component in
                !component.isEmpty && component.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            }
            if valid {
                pieces.append(.placeholder(Placeholder(path: path, text: raw, location: here)))
                paths.append(inner)
            } else {
                problems.append(.error(at: here, rule: "placeholder.syntax",
                                       "\(raw) is not a valid placeholder; write {{ name }} or {{ path.to.value }} with letters, digits, _ and -"))
            }
            offset += raw.count
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        return pieces
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}

/// Fills placeholders from a pass's `data:`.
///
/// A string that is exactly one placeholder takes the value with its type
/// (a number stays a number, so `numberStyle`/`currencyCode` work); inside
/// longer text a value is written as text.
public struct PlaceholderRenderer {
    /// The values: the pass's `data:` map.
    public var data: SourceNode
    /// Values every pass has without writing them, such as `serialNumber`.
    public var builtins: [String: SourceNode]
    /// Where the pass was defined, for "no value" messages.
    public var definitionLocation: SourceLocation
    public var serialNumber: String

    public init(data: SourceNode, builtins: [String: SourceNode], definitionLocation: SourceLocation, serialNumber: String) {
        self.data = data
        self.builtins = builtins
        self.definitionLocation = definitionLocation
        self.serialNumber = serialNumber
    }

    public func render(_ template: PlaceholderTemplate, problems: inout [ContentDiagnostic]) -> SourceNode {
        render(template.root, problems: &problems)
    }

    func render(_ node: PlaceholderTemplate.Node, problems: inout [ContentDiagnostic]) -> SourceNode {
        switch node {
        case .constant(let source):
            return source
        case .array(let elements, let location):
            return SourceNode(.array(elements.map { render($0, problems: &problems) }), at: location)
        case .object(let members, let location):
            return SourceNode(.object(members.map {
                SourceNode.Member(key: $0.key, keyLocation: $0.keyLocation, value: render($0.value, problems: &problems))
            }), at: location)
        case .string(let pieces, let location):
            // Exactly one placeholder: keep the value's type and where it was written.
            if pieces.count == 1, case .placeholder(let placeholder) = pieces[0] {
                guard let value = lookUp(placeholder, problems: &problems) else { return .scalar(.string(""), at: location) }
                return value
            }
            var text = ""
            for piece in pieces {
                switch piece {
                case .literal(let literal): text += literal
                case .placeholder(let placeholder):
                    guard let value = lookUp(placeholder, problems: &problems) else { continue }
                    switch value.scalarValue {
                    case .string(let string)?: text += string
                    case .int(let int)?: text += String(int)
                    case .double(let double)?: text += JSONValue.double(double).serializedString()
                    case .bool(let bool)?: text += bool ? "true" : "false"
                    default:
                        problems.append(.error(
                            at: value.location, rule: "placeholder.type",
                            "\(placeholder.text) stands inside text, so its value must be text, a number or a boolean, not \(value.jsonValue.typeName)",
                            notes: [(placeholder.location, "used here")]))
                    }
                }
            }
            return .scalar(.string(text), at: location)
        }
    }

    private func lookUp(_ placeholder: PlaceholderTemplate.Placeholder, problems: inout [ContentDiagnostic]) -> SourceNode? {
        var node: SourceNode? = data
        if data[placeholder.path[0]] == nil, let builtin = builtins[placeholder.path[0]] { node = builtin }
        else {
            for component in placeholder.path {
                if let index = Int(component), let elements = node?.elements {
                    node = elements.indices.contains(index) ? elements[index] : nil
                } else {
                    node = node?[component]
                }
            }
        }
        if let node, node.scalarValue != .null { return node }
        let key = placeholder.path.joined(separator: ".")
        problems.append(.error(
            at: definitionLocation, keyPath: KeyPath(["data"] + placeholder.path.map { .key($0) }), rule: "placeholder.missing",
            "pass \(serialNumber): placeholder \(placeholder.text) has no value; add `\(key)` under `data:` (or under `defaults: data:`)",
            notes: [(placeholder.location, "\(placeholder.text) is used here")]))
        return nil
    }
}
