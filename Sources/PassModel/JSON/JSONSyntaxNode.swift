/// A JSON value with the line and column (1-based) where it was written, and
/// the same for every key: what a content error needs to name the spot.
package struct JSONSyntaxNode: Sendable, Hashable {
    package indirect enum Kind: Sendable, Hashable {
        case scalar(JSONValue)
        case array([JSONSyntaxNode])
        case object([Member])
    }

    package struct Member: Sendable, Hashable {
        package var key: String
        package var keyLine: Int
        package var keyColumn: Int
        package var value: JSONSyntaxNode
    }

    package var kind: Kind
    package var line: Int
    package var column: Int

    /// The plain value, without positions.
    package var value: JSONValue {
        switch kind {
        case .scalar(let value): return value
        case .array(let elements): return .array(elements.map(\.value))
        case .object(let members):
            var object = JSONObject()
            for member in members { object[member.key] = member.value.value }
            return .object(object)
        }
    }
}
