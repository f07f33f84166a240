import PassModel

/// A problem in the content, templates or configuration, with the place to fix it.
///
/// Printed as `file:line:col: error: message` so editors and CI logs link to it.
public struct ContentDiagnostic: Sendable, Hashable, CustomStringConvertible, Error {
    public var severity: Diagnostic.Severity
    public var location: SourceLocation
    /// The key path inside the file or the rendered pass.json, when there is one.
    public var keyPath: JSONPath?
    public var rule: String
    public var message: String
    /// Further places that explain the problem (e.g. the template line of a placeholder).
    public var notes: [(location: SourceLocation, message: String)] = []

    public init(
        _ severity: Diagnostic.Severity, at location: SourceLocation, keyPath: JSONPath? = nil,
        rule: String, _ message: String, notes: [(SourceLocation, String)] = []
    ) {
        self.severity = severity
        self.location = location
        self.keyPath = keyPath
        self.rule = rule
        self.message = message
        self.notes = notes.map { (location: $0.0, message: $0.1) }
    }

    public static func error(
        at location: SourceLocation, keyPath: JSONPath? = nil, rule: String, _ message: String,
        notes: [(SourceLocation, String)] = []
    ) -> ContentDiagnostic {
        ContentDiagnostic(.error, at: location, keyPath: keyPath, rule: rule, message, notes: notes)
    }

    public static func warning(
        at location: SourceLocation, keyPath: JSONPath? = nil, rule: String, _ message: String
    ) -> ContentDiagnostic {
        ContentDiagnostic(.warning, at: location, keyPath: keyPath, rule: rule, message)
    }

    public var isError: Bool { severity == .error }

    public var description: String {
        var text = "\(location): \(severity.rawValue): "
        if let keyPath, !keyPath.isEmpty { text += "\(keyPath): " }
        text += "\(message) [\(rule)]"
        for note in notes { text += "\n\(note.location): note: \(note.message)" }
        return text
    }

    public static func == (lhs: ContentDiagnostic, rhs: ContentDiagnostic) -> Bool {
        lhs.description == rhs.description
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
