import PassModel

/// A position in a file that a person edits: `content/flights/ba.yml:12:7`.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The path as the user would type it (relative to the working directory when possible).
    public var file: String
    /// 1-based line; 0 when the problem concerns the whole file.
    public var line: Int
    /// 1-based column; 0 when unknown.
    public var column: Int

    public init(file: String, line: Int = 0, column: Int = 0) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String {
        guard line > 0 else { return file }
        return column > 0 ? "\(file):\(line):\(column)" : "\(file):\(line)"
    }
}

/// A problem in the content, templates or configuration, with the place to fix it.
///
/// Printed as `file:line:col: error: message` so editors and CI logs link to it.
public struct ContentDiagnostic: Sendable, Hashable, CustomStringConvertible, Error {
    public var severity: Diagnostic.Severity
    public var location: SourceLocation
    /// The key path inside the file or the rendered pass.json, when there is one.
    public var keyPath: KeyPath?
    public var rule: String
    public var message: String
    /// Further places that explain the problem (e.g. the template line of a placeholder).
    public var notes: [(location: SourceLocation, message: String)] = []

    public init(
        _ severity: Diagnostic.Severity, at location: SourceLocation, keyPath: KeyPath? = nil,
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
        at location: SourceLocation, keyPath: KeyPath? = nil, rule: String, _ message: String,
        notes: [(SourceLocation, String)] = []
    ) -> ContentDiagnostic {
        ContentDiagnostic(.error, at: location, keyPath: keyPath, rule: rule, message, notes: notes)
    }

    public static func warning(
        at location: SourceLocation, keyPath: KeyPath? = nil, rule: String, _ message: String
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

/// Thrown when loading stops on errors; carries every problem found, not just the first.
public struct ContentErrors: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ContentDiagnostic]
    public init(_ diagnostics: [ContentDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
