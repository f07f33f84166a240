import Foundation
import PassModel

/// A template's pass.json with its `{{ path.to.value }}` placeholders parsed
/// once, so rendering ten thousand passes does not re-scan every string.
package struct PlaceholderTemplate: Sendable {
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
    package private(set) var paths: [String] = []
    package var hasPlaceholders: Bool { !paths.isEmpty }

    /// A template that copies `root` as it is, filling no placeholders.
    init(root: SourceNode) {
        self.root = .constant(root)
    }

    /// Parses the placeholders of a whole tree; every malformed one is reported.
    package static func parse(_ source: SourceNode) -> Result<PlaceholderTemplate, ContentErrors> {
        var problems: [ContentDiagnostic] = []
        var paths: [String] = []
        let node = compile(source, problems: &problems, paths: &paths)
        if !problems.isEmpty { return .failure(ContentErrors(problems)) }
        var template = PlaceholderTemplate(root: source)
        template.root = node
        template.paths = paths
        return .success(template)
    }

    private static func compile(_ node: SourceNode, problems: inout [ContentDiagnostic], paths: inout [String]) -> Node
    {
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
            let compiled = members.map {
                (key: $0.key, keyLocation: $0.keyLocation, value: compile($0.value, problems: &problems, paths: &paths))
            }
            if compiled.allSatisfy({ if case .constant = $0.value { true } else { false } }) { return .constant(node) }
            return .object(compiled, node.location)
        }
    }

    static func pieces(
        of text: String, at location: SourceLocation, problems: inout [ContentDiagnostic], paths: inout [String]
    ) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        var offset = 0
        while let open = rest.range(of: "{{") {
            let literal = rest[rest.startIndex..<open.lowerBound]
            if !literal.isEmpty { pieces.append(.literal(String(literal))) }
            offset += literal.count
            // Column of the placeholder: the string's column, +1 for the opening quote.
            let here = SourceLocation(
                file: location.file, line: location.line,
                column: location.column > 0 ? location.column + 1 + offset : 0)
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                problems.append(
                    .error(
                        at: here, rule: "placeholder.unclosed",
                        "`{{` is never closed with `}}`; write {{ name }}"))
                return pieces
            }
            let inner = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: " \t")
            let raw = String(rest[open.lowerBound..<close.upperBound])
            let path = inner.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let valid =
                !inner.isEmpty
                && path.allSatisfy { component in
                    !component.isEmpty && component.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                }
            if valid {
                pieces.append(.placeholder(Placeholder(path: path, text: raw, location: here)))
                paths.append(inner)
            } else {
                problems.append(
                    .error(
                        at: here, rule: "placeholder.syntax",
                        "\(raw) is not a valid placeholder; write {{ name }} or {{ "
                            + "path.to.value }} with letters, digits, _ and -"))
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
