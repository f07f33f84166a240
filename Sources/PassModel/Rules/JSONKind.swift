/// The kinds of JSON value a key may require.
enum JSONKind: Sendable {
    case string, number, integer, boolean, object, array

    var name: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .integer: return "a whole number"
        case .boolean: return "a boolean"
        case .object: return "an object"
        case .array: return "an array"
        }
    }

    func matches(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.boolean, .bool), (.object, .object), (.array, .array): return true
        case (.number, .int), (.number, .double), (.integer, .int): return true
        case (.integer, .double(let d)): return d == d.rounded() && abs(d) < 1e15
        default: return false
        }
    }
}
