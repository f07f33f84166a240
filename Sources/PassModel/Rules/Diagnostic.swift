/// One problem found in a pass or its content, written for the person who has to fix it.
package struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    package enum Severity: String, Sendable, Hashable { case error, warning }

    package var severity: Severity
    /// Where in the pass.json (or content file) the problem is.
    package var keyPath: JSONPath
    /// A stable identifier of the rule, e.g. `barcode.format`.
    package var rule: String
    /// What is wrong and what to do about it.
    package var message: String

    package init(_ severity: Severity, at keyPath: JSONPath, rule: String, _ message: String) {
        self.severity = severity
        self.keyPath = keyPath
        self.rule = rule
        self.message = message
    }

    package static func error(at keyPath: JSONPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.error, at: keyPath, rule: rule, message)
    }

    package static func warning(at keyPath: JSONPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.warning, at: keyPath, rule: rule, message)
    }

    package var isError: Bool { severity == .error }

    package var description: String { "\(severity.rawValue): \(keyPath): \(message) [\(rule)]" }
}
