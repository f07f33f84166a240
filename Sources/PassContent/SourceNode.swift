package import PassModel

/// A parsed YAML or JSON value that remembers where each part was written,
/// so that a rule broken deep inside a rendered pass.json can point at the
/// line an editor has to change.
package struct SourceNode: Sendable, Hashable {
    package indirect enum Kind: Sendable, Hashable {
        case scalar(JSONValue)
        case array([SourceNode])
        /// Keys in written order, each with the location of the key itself.
        case object([Member])
    }

    package struct Member: Sendable, Hashable {
        package var key: String
        package var keyLocation: SourceLocation
        package var value: SourceNode
        package init(key: String, keyLocation: SourceLocation, value: SourceNode) {
            self.key = key
            self.keyLocation = keyLocation
            self.value = value
        }
    }

    package var kind: Kind
    package var location: SourceLocation

    package init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
    }

    package static func scalar(_ value: JSONValue, at location: SourceLocation) -> SourceNode {
        SourceNode(.scalar(value), at: location)
    }

    package var members: [Member]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    package var elements: [SourceNode]? {
        if case .array(let elements) = kind { return elements }
        return nil
    }

    package var scalarValue: JSONValue? {
        if case .scalar(let value) = kind { return value }
        return nil
    }

    package var stringValue: String? { scalarValue?.stringValue }

    package subscript(key: String) -> SourceNode? {
        members?.first { $0.key == key }?.value
    }

    package func member(_ key: String) -> Member? {
        members?.first { $0.key == key }
    }

    /// The plain JSON value, without locations.
    package var jsonValue: JSONValue {
        switch kind {
        case .scalar(let value): return value
        case .array(let elements): return .array(elements.map(\.jsonValue))
        case .object(let members):
            var object = JSONObject()
            for member in members { object[member.key] = member.value.jsonValue }
            return .object(object)
        }
    }

    /// Builds a node from plain JSON, placing every part at `location`.
    package init(json value: JSONValue, at location: SourceLocation) {
        switch value {
        case .array(let items):
            self.init(.array(items.map { SourceNode(json: $0, at: location) }), at: location)
        case .object(let object):
            self.init(
                .object(
                    object.map {
                        Member(key: $0.key, keyLocation: location, value: SourceNode(json: $0.value, at: location))
                    }), at: location)
        default:
            self.init(.scalar(value), at: location)
        }
    }

    /// Where the value at `keyPath` was written; the nearest enclosing value
    /// when the path does not exist (e.g. for a missing required key).
    package func location(at keyPath: JSONPath) -> SourceLocation {
        var node = self
        for component in keyPath.components {
            switch (component, node.kind) {
            case (.key(let key), .object(let members)):
                guard let member = members.first(where: { $0.key == key }) else { return node.location }
                node = member.value
            case (.index(let index), .array(let elements)):
                guard elements.indices.contains(index) else { return node.location }
                node = elements[index]
            default:
                return node.location
            }
        }
        return node.location
    }

    /// Deep merge with locations: objects merge key by key, anything else is
    /// replaced by `overlay`: objects merge, arrays replace.
    package func merging(_ overlay: SourceNode) -> SourceNode {
        guard case .object(var base) = kind, case .object(let top) = overlay.kind else { return overlay }
        for member in top {
            if let index = base.firstIndex(where: { $0.key == member.key }) {
                base[index].value = base[index].value.merging(member.value)
            } else {
                base.append(member)
            }
        }
        return SourceNode(.object(base), at: location)
    }

    /// Sets `key` in an object node (appending it when new).
    package mutating func set(_ key: String, to value: SourceNode) {
        guard case .object(var members) = kind else { return }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append(Member(key: key, keyLocation: value.location, value: value))
        }
        kind = .object(members)
    }

    /// Removes `key` from an object node, returning its value.
    @discardableResult
    package mutating func remove(_ key: String) -> SourceNode? {
        guard case .object(var members) = kind, let index = members.firstIndex(where: { $0.key == key }) else {
            return nil
        }
        let removed = members.remove(at: index)
        kind = .object(members)
        return removed.value
    }
}
