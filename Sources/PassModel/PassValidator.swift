/// Checks a pass.json tree against every rule of Apple's pass format
/// (pass-format-notes.md, "pass.json rules") and reports all problems at
/// once, each with the exact key path, a stable rule id and a message that
/// says what is wrong, what is allowed and what to do.
///
/// It works on the JSON tree rather than on ``Pass`` so that it can name the
/// exact key of a value of the wrong type, and keep keys Apple does not
/// define (they produce an `unknown-key` warning and pass through).
///
/// Errors are passes a device rejects or mishandles; warnings are passes
/// that install but do not show what the author expects (fields beyond the
/// display limits, Code128 on Apple Watch, unknown keys).
public struct PassValidator: Sendable {
    public struct Options: Sendable, Hashable {
        /// Accept a plain `http://` `webServiceURL`. Only development devices
        /// talk to such a service (`--allow-http-web-service`).
        public var allowsHTTPWebService: Bool

        public init(allowsHTTPWebService: Bool = false) {
            self.allowsHTTPWebService = allowsHTTPWebService
        }
    }

    public init() {}

    /// All problems of `pass`, in document order of the checks; empty when the pass is valid.
    public func validate(_ pass: JSONValue, options: Options = .init()) -> [Diagnostic] {
        guard case .object(let root) = pass else {
            return [.error(
                at: .root, rule: "json.root",
                "pass.json must be a JSON object ({ … }), but it is \(pass.typeName); put the pass's keys in one object"
            )]
        }
        var run = ValidationRun(options: options, root: root)
        run.reportUnknownKeys(in: root, at: .root, known: Pass.knownKeys, place: "the pass")
        run.checkIdentity()
        let firstBarcode = run.checkBarcodes()
        let styles = run.checkStyles()
        for (style, structure) in styles {
            run.checkStructure(structure, style: style, firstBarcode: firstBarcode)
        }
        run.checkAppearance()
        run.checkRelevance()
        run.checkWebService()
        run.checkAppLaunch()
        run.checkGrouping(styles: styles.map(\.style))
        run.checkNFC()
        run.checkOtherKeys()
        return run.diagnostics
    }
}

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

/// The state of one validation: the pass and the diagnostics found so far.
/// The checks live in extensions, one file per area of the format.
struct ValidationRun {
    let options: PassValidator.Options
    let root: JSONObject
    var diagnostics: [Diagnostic] = []
    /// Field keys seen so far, with where they were first used (for `field.key.unique`).
    var fieldKeys: [String: KeyPath] = [:]

    init(options: PassValidator.Options, root: JSONObject) {
        self.options = options
        self.root = root
    }

    mutating func error(_ path: KeyPath, _ rule: String, _ message: String) {
        diagnostics.append(.error(at: path, rule: rule, message))
    }

    mutating func warning(_ path: KeyPath, _ rule: String, _ message: String) {
        diagnostics.append(.warning(at: path, rule: rule, message))
    }

    // MARK: Types

    /// Reports `key.type` when `value` is not of `kind`; returns whether it is.
    @discardableResult
    mutating func expect(_ value: JSONValue, is kind: JSONKind, at path: KeyPath) -> Bool {
        if kind.matches(value) { return true }
        error(path, "key.type", ValidationRun.typeMessage(path: path, expected: kind, found: value))
        return false
    }

    /// The value at `key` when it is present and of `kind`; reports `key.type` when it has another type.
    mutating func member(_ key: String, of object: JSONObject, at base: KeyPath, is kind: JSONKind) -> JSONValue? {
        guard let value = object[key] else { return nil }
        return expect(value, is: kind, at: base.appending(key)) ? value : nil
    }

    mutating func string(_ key: String, of object: JSONObject, at base: KeyPath) -> String? {
        member(key, of: object, at: base, is: .string)?.stringValue
    }

    mutating func number(_ key: String, of object: JSONObject, at base: KeyPath) -> Double? {
        member(key, of: object, at: base, is: .number)?.numberValue
    }

    mutating func object(_ key: String, of object: JSONObject, at base: KeyPath) -> JSONObject? {
        member(key, of: object, at: base, is: .object)?.objectValue
    }

    mutating func array(_ key: String, of object: JSONObject, at base: KeyPath) -> [JSONValue]? {
        member(key, of: object, at: base, is: .array)?.arrayValue
    }

    mutating func checkBoolean(_ key: String, of object: JSONObject, at base: KeyPath) {
        _ = member(key, of: object, at: base, is: .boolean)
    }

    /// "voided must be a boolean, but it is a string ("true"); write true or false without quotes".
    static func typeMessage(path: KeyPath, expected: JSONKind, found value: JSONValue) -> String {
        let shown = value.serializedString()
        let excerpt = shown.count > 40 ? String(shown.prefix(37)) + "…" : shown
        var message = "\(path) must be \(expected.name), but it is \(value.typeName) (\(excerpt))"
        switch (expected, value) {
        case (.string, .int), (.string, .double), (.string, .bool):
            message += "; put it in quotes: \"\(shown)\""
        case (.boolean, .string(let text)) where text == "true" || text == "false":
            message += "; write \(text) without quotes"
        case (.number, .string(let text)) where Double(text) != nil,
             (.integer, .string(let text)) where Int(text) != nil:
            message += "; write \(text) without quotes"
        case (.integer, .double):
            message += "; use a whole number"
        case (.boolean, _):
            message += "; write true or false, without quotes"
        default:
            message += "; change it to \(expected.name)"
        }
        return message
    }

    // MARK: Unknown keys

    /// Warns (`unknown-key`) about each key of `object` that Apple does not
    /// define. Such keys are kept in the output; a key one or two letters
    /// away from a known one is most likely a typo, so the message says which.
    mutating func reportUnknownKeys(in object: JSONObject, at base: KeyPath, known: [String], place: String) {
        for key in object.keys where !known.contains(key) {
            var message = "unknown key \"\(key)\" in \(place) is not part of Apple's pass format; it is passed through as is"
            if let nearest = Spelling.nearest(to: key, in: known) {
                message += ". Did you mean \"\(nearest)\"? Rename it if so"
            } else {
                message += "; remove it if it is a mistake"
            }
            warning(base.appending(key), "unknown-key", message)
        }
    }
}
