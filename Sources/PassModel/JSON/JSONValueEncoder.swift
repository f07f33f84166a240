/// Encodes `Encodable` values straight into a `JSONValue` tree. Object keys
/// come out in the order they are encoded (for synthesized conformances, the
/// order of the `CodingKeys`), so the result serializes to the same bytes
/// every time. `nil` optionals are left out, as synthesized code asks.
package struct JSONValueEncoder: Sendable {
    package init() {}

    package func encode(_ value: some Encodable) throws -> JSONValue {
        let node = EncodingNode()
        try node.store(value, codingPath: [])
        return node.value
    }
}

/// A mutable slot in the tree being built. Containers hand out child slots
/// and fill them later, which is why this is a class. It never leaves one
/// `encode` call, so it needs no synchronization.
final class EncodingNode {
    enum Content {
        case unset
        case value(JSONValue)
        case object(keys: [String], children: [String: EncodingNode])
        case array([EncodingNode])
    }

    var content: Content = .unset

    var value: JSONValue {
        switch content {
        case .unset: return .object(JSONObject())
        case .value(let value): return value
        case .object(let keys, let children): return .object(JSONObject(keys.map { ($0, children[$0]!.value) }))
        case .array(let items): return .array(items.map(\.value))
        }
    }

    func store<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        switch value {
        // Integers first: where Foundation bridges numbers, `1 as? Bool` can succeed.
        case let integer as any FixedWidthInteger:
            guard let int = Int(exactly: integer) else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: codingPath, debugDescription: "the integer does not fit in Int"))
            }
            content = .value(.int(int))
        case let json as JSONValue: content = .value(json)
        case let string as String: content = .value(.string(string))
        case let bool as Bool: content = .value(.bool(bool))
        case let double as Double: content = .value(.double(double))
        case let float as Float: content = .value(.double(Double(float)))
        default:
            try value.encode(to: JSONTreeEncoder(node: self, codingPath: codingPath))
        }
    }

    func child(forKey key: String) -> EncodingNode {
        var keys: [String] = []
        var children: [String: EncodingNode] = [:]
        if case .object(let existingKeys, let existingChildren) = content {
            keys = existingKeys
            children = existingChildren
        }
        if let existing = children[key] { return existing }
        let node = EncodingNode()
        keys.append(key)
        children[key] = node
        content = .object(keys: keys, children: children)
        return node
    }

    func appendChild() -> EncodingNode {
        var items: [EncodingNode] = []
        if case .array(let existing) = content { items = existing }
        let node = EncodingNode()
        items.append(node)
        content = .array(items)
        return node
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object(keys: [], children: [:])
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    var arrayCount: Int {
        if case .array(let items) = content { return items.count }
        return 0
    }
}

struct JSONTreeEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: EncodingNode
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws {
            node.child(forKey: key.stringValue).content = .value(.null)
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try node.child(forKey: key.stringValue).store(value, codingPath: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            JSONTreeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(
                keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            JSONTreeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
                .unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            JSONTreeEncoder(node: node.child(forKey: "super"), codingPath: codingPath + [AnyCodingKey("super")])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            JSONTreeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: EncodingNode
        let codingPath: [any CodingKey]

        var count: Int { node.arrayCount }

        private func nextPath() -> [any CodingKey] { codingPath + [AnyCodingKey(index: count)] }

        mutating func encodeNil() throws { node.appendChild().content = .value(.null) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = nextPath()
            try node.appendChild().store(value, codingPath: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
            NestedKey
        > {
            let path = nextPath()
            return JSONTreeEncoder(node: node.appendChild(), codingPath: path).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = nextPath()
            return JSONTreeEncoder(node: node.appendChild(), codingPath: path).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let path = nextPath()
            return JSONTreeEncoder(node: node.appendChild(), codingPath: path)
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let node: EncodingNode
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.content = .value(.null) }

        mutating func encode<T: Encodable>(_ value: T) throws { try node.store(value, codingPath: codingPath) }
    }
}
