package import PassModel

/// A problem in the content, templates or configuration, with the place to fix it.
///
/// Printed as `file:line:col: error: message` so editors and CI logs link to it.
package struct ContentDiagnostic: Sendable, Hashable, CustomStringConvertible, Error {
    package var severity: Diagnostic.Severity
    package var location: SourceLocation
    /// The key path inside the file or the rendered pass.json, when there is one.
    package var keyPath: JSONPath?
    package var rule: String
    package var message: String
    /// Further places that explain the problem (e.g. the template line of a placeholder).
    package var notes: [(location: SourceLocation, message: String)] = []

    package init(
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

    package static func error(
        at location: SourceLocation, keyPath: JSONPath? = nil, rule: String, _ message: String,
        notes: [(SourceLocation, String)] = []
    ) -> ContentDiagnostic {
        ContentDiagnostic(.error, at: location, keyPath: keyPath, rule: rule, message, notes: notes)
    }

    package static func warning(
        at location: SourceLocation, keyPath: JSONPath? = nil, rule: String, _ message: String
    ) -> ContentDiagnostic {
        ContentDiagnostic(.warning, at: location, keyPath: keyPath, rule: rule, message)
    }

    package var isError: Bool { severity == .error }

    package var description: String {
        var text = "\(location): \(severity.rawValue): "
        if let keyPath, !keyPath.isEmpty { text += "\(keyPath): " }
        text += "\(message) [\(rule)]"
        for note in notes { text += "\n\(note.location): note: \(note.message)" }
        return text
    }

    package static func == (lhs: ContentDiagnostic, rhs: ContentDiagnostic) -> Bool {
        lhs.description == rhs.description
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
