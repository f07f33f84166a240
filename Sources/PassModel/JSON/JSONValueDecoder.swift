/// Decodes `Decodable` types straight from a `JSONValue` tree, with no text
/// in between. `JSONValue` members are taken over as they are, keeping key
/// order. Integers decode from whole numbers only; `Double` from any number.
package struct JSONValueDecoder: Sendable {
    package init() {}

    package func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONTreeDecoder(value: value, codingPath: []).unbox(value, as: T.self, path: [])
    }
}

struct JSONTreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw mismatch(JSONObject.self, "expected an object, found \(value.typeName)", codingPath)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw mismatch([JSONValue].self, "expected an array, found \(value.typeName)", codingPath)
        }
        return UnkeyedContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
    }

    func mismatch(_ type: Any.Type, _ message: String, _ path: [any CodingKey]) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: path, debugDescription: message))
    }

    /// Turns `value` into a `T`: primitives directly, everything else through its `init(from:)`.
    func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, path: [any CodingKey]) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == String.self {
            guard case .string(let string) = value else {
                throw mismatch(T.self, "expected a string, found \(value.typeName)", path)
            }
            return string as! T
        }
        if T.self == Bool.self {
            guard case .bool(let bool) = value else {
                throw mismatch(T.self, "expected a boolean, found \(value.typeName)", path)
            }
            return bool as! T
        }
        if T.self == Double.self {
            guard let number = value.numberValue else {
                throw mismatch(T.self, "expected a number, found \(value.typeName)", path)
            }
            return number as! T
        }
        if T.self == Float.self {
            guard let number = value.numberValue else {
                throw mismatch(T.self, "expected a number, found \(value.typeName)", path)
            }
            return Float(number) as! T
        }
        if let integerType = T.self as? any FixedWidthInteger.Type {
            return try unboxInteger(value, as: integerType, path: path) as! T
        }
        return try T(from: JSONTreeDecoder(value: value, codingPath: path))
    }

    private func unboxInteger<I: FixedWidthInteger>(_ value: JSONValue, as type: I.Type, path: [any CodingKey]) throws
        -> I
    {
        switch value {
        case .int(let int):
            if let exact = I(exactly: int) { return exact }
        case .double(let double):
            if let exact = I(exactly: double) { return exact }
        default:
            throw mismatch(I.self, "expected a whole number, found \(value.typeName)", path)
        }
        throw DecodingError.dataCorrupted(
            .init(codingPath: path, debugDescription: "the number does not fit in \(I.self)"))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: JSONObject
        let codingPath: [any CodingKey]

        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

        private func value(for key: Key) throws -> JSONValue {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: codingPath, debugDescription: "missing key \"\(key.stringValue)\""))
            }
            return value
        }

        private var decoder: JSONTreeDecoder { JSONTreeDecoder(value: .object(object), codingPath: codingPath) }

        func decodeNil(forKey key: Key) throws -> Bool { try value(for: key) == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.unbox(try value(for: key), as: T.self, path: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try JSONTreeDecoder(value: try value(for: key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try JSONTreeDecoder(value: try value(for: key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            JSONTreeDecoder(value: object["super"] ?? .null, codingPath: codingPath + [AnyCodingKey("super")])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            JSONTreeDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let items: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(items: [JSONValue], codingPath: [any CodingKey]) {
            self.items = items
            self.codingPath = codingPath
        }

        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next() throws -> (JSONValue, [any CodingKey]) {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    JSONValue.self, .init(codingPath: codingPath, debugDescription: "no more array elements"))
            }
            defer { currentIndex += 1 }
            return (items[currentIndex], codingPath + [AnyCodingKey(index: currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { return false }
            if items[currentIndex] == .null {
                currentIndex += 1
                return true
            }
            return false
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next()
            return try JSONTreeDecoder(value: value, codingPath: path).unbox(value, as: T.self, path: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next()
            return try JSONTreeDecoder(value: value, codingPath: path).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next()
            return try JSONTreeDecoder(value: value, codingPath: path).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next()
            return JSONTreeDecoder(value: value, codingPath: path)
        }
    }

    struct SingleContainer: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONTreeDecoder(value: value, codingPath: codingPath).unbox(value, as: T.self, path: codingPath)
        }
    }
}
