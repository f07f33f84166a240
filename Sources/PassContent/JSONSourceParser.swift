import PassModel

/// Reads JSON content files and templates with PassModel's parser, keeping
/// the file name with every position so errors read `file:line:col`.
package enum JSONSourceParser {
    package static func parse(_ bytes: [UInt8], file: String) throws(ContentDiagnostic) -> SourceNode {
        do {
            return convert(try JSONSyntaxParser.parse(bytes), file: file)
        } catch {
            let rule = error.kind == .duplicateKey ? "json.duplicate-key" : "json.syntax"
            throw .error(
                at: SourceLocation(file: file, line: error.line, column: error.column), rule: rule,
                "invalid JSON: \(error.message); fix the file so that it is valid JSON")
        }
    }

    private static func convert(_ node: JSONSyntaxNode, file: String) -> SourceNode {
        let location = SourceLocation(file: file, line: node.line, column: node.column)
        switch node.kind {
        case .scalar(let value): return .scalar(value, at: location)
        case .array(let elements): return SourceNode(.array(elements.map { convert($0, file: file) }), at: location)
        case .object(let members):
            return SourceNode(
                .object(
                    members.map {
                        SourceNode.Member(
                            key: $0.key,
                            keyLocation: SourceLocation(file: file, line: $0.keyLine, column: $0.keyColumn),
                            value: convert($0.value, file: file))
                    }), at: location)
        }
    }
}
