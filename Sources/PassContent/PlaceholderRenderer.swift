import PassModel

/// Fills placeholders from a pass's `data:`.
///
/// A string that is exactly one placeholder takes the value with its type
/// (a number stays a number, so `numberStyle`/`currencyCode` work); inside
/// longer text a value is written as text.
package struct PlaceholderRenderer {
    /// The values: the pass's `data:` map.
    package var data: SourceNode
    /// Values every pass has without writing them, such as `serialNumber`.
    package var builtins: [String: SourceNode]
    /// Where the pass was defined, for "no value" messages.
    package var definitionLocation: SourceLocation
    package var serialNumber: String
    /// "pass" or "order", for messages.
    package var noun: String

    package init(
        data: SourceNode, builtins: [String: SourceNode], definitionLocation: SourceLocation, serialNumber: String,
        noun: String = WalletItemKind.pass.noun
    ) {
        self.data = data
        self.builtins = builtins
        self.definitionLocation = definitionLocation
        self.serialNumber = serialNumber
        self.noun = noun
    }

    package func render(_ template: PlaceholderTemplate, problems: inout [ContentDiagnostic]) -> SourceNode {
        render(template.root, problems: &problems)
    }

    func render(_ node: PlaceholderTemplate.Node, problems: inout [ContentDiagnostic]) -> SourceNode {
        switch node {
        case .constant(let source):
            return source
        case .array(let elements, let location):
            return SourceNode(.array(elements.map { render($0, problems: &problems) }), at: location)
        case .object(let members, let location):
            return SourceNode(
                .object(
                    members.map {
                        SourceNode.Member(
                            key: $0.key, keyLocation: $0.keyLocation, value: render($0.value, problems: &problems))
                    }), at: location)
        case .string(let pieces, let location):
            // Exactly one placeholder: keep the value's type and where it was written.
            if pieces.count == 1, case .placeholder(let placeholder) = pieces[0] {
                guard let value = lookUp(placeholder, problems: &problems) else {
                    return .scalar(.string(""), at: location)
                }
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
                        problems.append(
                            .error(
                                at: value.location, rule: "placeholder.type",
                                "\(placeholder.text) stands inside text, so its value must be text, a "
                                    + "number or a boolean, not \(value.jsonValue.typeName)",
                                notes: [(placeholder.location, "used here")]))
                    }
                }
            }
            return .scalar(.string(text), at: location)
        }
    }

    /// The text of a string with placeholders, where only text fits (a
    /// pass.strings value): a number or a boolean is written as text.
    func text(of pieces: [PlaceholderTemplate.Piece], at location: SourceLocation, problems: inout [ContentDiagnostic])
        -> String
    {
        let node = render(.string(pieces, location), problems: &problems)
        switch node.scalarValue {
        case .string(let string)?: return string
        case .int(let int)?: return String(int)
        case .double(let double)?: return JSONValue.double(double).serializedString()
        case .bool(let bool)?: return bool ? "true" : "false"
        default:
            problems.append(
                .error(
                    at: node.location, rule: "placeholder.type",
                    "the value used in \(location.file) must be text, a number or a "
                        + "boolean, not \(node.jsonValue.typeName)",
                    notes: [(location, "used here")]))
            return ""
        }
    }

    private func lookUp(_ placeholder: PlaceholderTemplate.Placeholder, problems: inout [ContentDiagnostic])
        -> SourceNode?
    {
        var node: SourceNode? = data
        if data[placeholder.path[0]] == nil, let builtin = builtins[placeholder.path[0]] {
            node = builtin
        } else {
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
        problems.append(
            .error(
                at: definitionLocation, keyPath: JSONPath(["data"] + placeholder.path.map { .key($0) }),
                rule: "placeholder.missing",
                "\(noun) \(serialNumber): placeholder \(placeholder.text) has no value; add "
                    + "`\(key)` under `data:` (or under `defaults: data:`)",
                notes: [(placeholder.location, "\(placeholder.text) is used here")]))
        return nil
    }
}
