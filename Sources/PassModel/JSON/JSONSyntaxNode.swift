/// A JSON value with the line and column (1-based) where it was written, and
/// the same for every key: what a content error needs to name the spot.
public struct JSONSyntaxNode: Sendable, Hashable {
    public indirect enum Kind: Sendable, Hashable {
        case scalar(JSONValue)
        case array([JSONSyntaxNode])
        case object([Member])
    }

    public struct Member: Sendable, Hashable {
        public var key: String
        public var keyLine: Int
        public var keyColumn: Int
        public var value: JSONSyntaxNode
    }

    public var kind: Kind
    public var line: Int
    public var column: Int

    /// The plain value, without positions.
    public var value: JSONValue {
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
