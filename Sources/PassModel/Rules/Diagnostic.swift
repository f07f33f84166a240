/// One problem found in a pass or its content, written for the person who has to fix it.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable { case error, warning }

    public var severity: Severity
    /// Where in the pass.json (or content file) the problem is.
    public var keyPath: JSONPath
    /// A stable identifier of the rule, e.g. `barcode.format`.
    public var rule: String
    /// What is wrong and what to do about it.
    public var message: String

    public init(_ severity: Severity, at keyPath: JSONPath, rule: String, _ message: String) {
        self.severity = severity
        self.keyPath = keyPath
        self.rule = rule
        self.message = message
    }

    public static func error(at keyPath: JSONPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.error, at: keyPath, rule: rule, message)
    }

    public static func warning(at keyPath: JSONPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.warning, at: keyPath, rule: rule, message)
    }

    public var isError: Bool { severity == .error }

    public var description: String { "\(severity.rawValue): \(keyPath): \(message) [\(rule)]" }
}
