/// A JSON value that keeps the order of object keys, so that a rendered
/// pass.json reads like its template and unknown keys pass through untouched.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    package var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    package var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    package var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as a number, whether it was written as an integer or not.
    package var numberValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    package var isNumber: Bool { numberValue != nil }

    /// A short name of the JSON type, for messages ("expected a string, found a number").
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The value at `key` when this is an object.
    package subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue {
    /// Deep merge: objects merge key by key, everything else (arrays included)
    /// is replaced by `overlay`: how a content file's `pass:` applies to the
    /// rendered pass.json.
    package func merging(_ overlay: JSONValue) -> JSONValue {
        guard case .object(var base) = self, case .object(let top) = overlay else { return overlay }
        for (key, value) in top {
            if let existing = base[key] {
                base[key] = existing.merging(value)
            } else {
                base[key] = value
            }
        }
        return .object(base)
    }
}
