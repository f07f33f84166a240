/// The state of one validation: the pass and the diagnostics found so far.
/// The checks live in extensions, one file per area of the format.
struct ValidationRun {
    let options: PassValidator.Options
    let root: JSONObject
    var diagnostics: [Diagnostic] = []
    /// Field keys seen so far, with where they were first used (for `field.key.unique`).
    var fieldKeys: [String: JSONPath] = [:]

    init(options: PassValidator.Options, root: JSONObject) {
        self.options = options
        self.root = root
    }

    mutating func error(_ path: JSONPath, _ rule: String, _ message: String) {
        diagnostics.append(.error(at: path, rule: rule, message))
    }

    mutating func warning(_ path: JSONPath, _ rule: String, _ message: String) {
        diagnostics.append(.warning(at: path, rule: rule, message))
    }

    /// An error for own content, a warning for a distributed pass: for
    /// what Apple's documentation rules out but Wallet shows anyway.
    mutating func guidance(_ path: JSONPath, _ rule: String, _ message: String) {
        switch options.audience {
        case .ownContent: error(path, rule, message)
        case .distributedPass: warning(path, rule, message + " (Wallet shows the pass anyway)")
        }
    }

    /// `text` as each language of the pass shows it: the pass.strings value
    /// for it where a table has one, else the text itself (by language;
    /// "" when no table has it).
    func localizedVariants(of text: String) -> [(language: String, text: String)] {
        let found = options.localizations.keys.sorted().compactMap { language in
            options.localizations[language]?[text].map { (language: language, text: $0) }
        }
        return found.isEmpty ? [(language: "", text: text)] : found
    }

    // MARK: Types

    /// Reports `key.type` when `value` is not of `kind`; returns whether it is.
    @discardableResult
    mutating func expect(_ value: JSONValue, is kind: JSONKind, at path: JSONPath) -> Bool {
        if kind.matches(value) { return true }
        error(path, "key.type", ValidationRun.typeMessage(path: path, expected: kind, found: value))
        return false
    }

    /// The value at `key` when it is present and of `kind`; reports `key.type` when it has another type.
    mutating func member(_ key: String, of object: JSONObject, at base: JSONPath, is kind: JSONKind) -> JSONValue? {
        guard let value = object[key] else { return nil }
        // The path is made only for the message: every pass looks up some hundred members.
        guard kind.matches(value) else {
            expect(value, is: kind, at: base.appending(key))
            return nil
        }
        return value
    }

    mutating func string(_ key: String, of object: JSONObject, at base: JSONPath) -> String? {
        member(key, of: object, at: base, is: .string)?.stringValue
    }

    mutating func number(_ key: String, of object: JSONObject, at base: JSONPath) -> Double? {
        member(key, of: object, at: base, is: .number)?.numberValue
    }

    mutating func object(_ key: String, of object: JSONObject, at base: JSONPath) -> JSONObject? {
        member(key, of: object, at: base, is: .object)?.objectValue
    }

    mutating func array(_ key: String, of object: JSONObject, at base: JSONPath) -> [JSONValue]? {
        member(key, of: object, at: base, is: .array)?.arrayValue
    }

    mutating func checkBoolean(_ key: String, of object: JSONObject, at base: JSONPath) {
        _ = member(key, of: object, at: base, is: .boolean)
    }

    /// "voided must be a boolean, but it is a string ("true"); write true or false without quotes".
    static func typeMessage(path: JSONPath, expected: JSONKind, found value: JSONValue) -> String {
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
    mutating func reportUnknownKeys(
        in object: JSONObject, at base: JSONPath, known: [String], place: @autoclosure () -> String
    ) {
        for key in object.keys where !known.contains(key) {
            reportUnknownKey(key, at: base, known: known, place: place())
        }
    }

    /// The same, with a key list built once (the pass's own keys, a field's: checked in every pass).
    mutating func reportUnknownKeys(
        in object: JSONObject, at base: JSONPath, known: KnownKeys, place: @autoclosure () -> String
    ) {
        for key in object.keys where !known.contains(key) {
            reportUnknownKey(key, at: base, known: known.names, place: place())
        }
    }

    private mutating func reportUnknownKey(_ key: String, at base: JSONPath, known: [String], place: String) {
        var message =
            "unknown key \"\(key)\" in \(place) is not part of Apple's pass format; it is passed through as is"
        if let nearest = Spelling.nearest(to: key, in: known) {
            message += ". Did you mean \"\(nearest)\"? Rename it if so"
        } else {
            message += "; remove it if it is a mistake"
        }
        warning(base.appending(key), "unknown-key", message)
    }
}
