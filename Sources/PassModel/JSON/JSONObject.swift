/// A JSON object with its keys in the order they were written.
///
/// Keys and values are kept side by side, in order: writing an object out or walking it
/// hashes nothing. A key is found by a scan while the object is small, as nearly every
/// object of a pass is (comparing a few short keys costs less than hashing one), and
/// through an index of positions once it has more than `scannedKeys`. Every pass of a
/// build goes through several of these per object (render, validation, encoding).
package struct JSONObject: Sendable, Hashable, Sequence {
    package private(set) var keys: [String] = []
    private var values: [JSONValue] = []
    /// Each key's position, once there are more than `scannedKeys` keys.
    private var positions: [String: Int]?

    private static let scannedKeys = 12

    package init() {}

    package init(_ pairs: [(String, JSONValue)]) {
        keys.reserveCapacity(pairs.count)
        values.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    package var count: Int { keys.count }
    package var isEmpty: Bool { keys.isEmpty }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return keys.firstIndex(of: key)
    }

    package subscript(key: String) -> JSONValue? {
        get { position(of: key).map { values[$0] } }
        set {
            if let newValue {
                if let position = position(of: key) {
                    values[position] = newValue
                    return
                }
                keys.append(key)
                values.append(newValue)
                if positions != nil {
                    positions![key] = keys.count - 1
                } else if keys.count > Self.scannedKeys {
                    indexPositions()
                }
            } else if let position = position(of: key) {
                keys.remove(at: position)
                values.remove(at: position)
                if positions != nil { indexPositions() }
            }
        }
    }

    private mutating func indexPositions() {
        positions = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($0.element, $0.offset) })
    }

    package struct Iterator: IteratorProtocol {
        private let object: JSONObject
        private var index = 0

        fileprivate init(_ object: JSONObject) { self.object = object }

        package mutating func next() -> (key: String, value: JSONValue)? {
            guard index < object.keys.count else { return nil }
            defer { index += 1 }
            return (object.keys[index], object.values[index])
        }
    }

    package func makeIterator() -> Iterator { Iterator(self) }

    package var underestimatedCount: Int { keys.count }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keys == rhs.keys && lhs.values == rhs.values
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(keys)
        hasher.combine(values)
    }
}
