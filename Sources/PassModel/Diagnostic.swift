/// A path to a value inside a JSON document: `boardingPass.primaryFields[0].key`.
public struct KeyPath: Sendable, Hashable, CustomStringConvertible, ExpressibleByArrayLiteral {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }
    public init(arrayLiteral elements: Component...) { self.components = elements }

    public static let root = KeyPath()

    public func appending(_ key: String) -> KeyPath { KeyPath(components + [.key(key)]) }
    public func appending(_ index: Int) -> KeyPath { KeyPath(components + [.index(index)]) }
    public static func + (lhs: KeyPath, rhs: KeyPath) -> KeyPath { KeyPath(lhs.components + rhs.components) }

    public var isEmpty: Bool { components.isEmpty }

    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let i): text += "[\(i)]"
            }
        }
        return text.isEmpty ? "(top level)" : text
    }
}

/// One problem found in a pass or its content, written for the person who has to fix it.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable { case error, warning }

    public var severity: Severity
    /// Where in the pass.json (or content file) the problem is.
    public var keyPath: KeyPath
    /// A stable identifier of the rule, e.g. `barcode.format`.
    public var rule: String
    /// What is wrong and what to do about it.
    public var message: String

    public init(_ severity: Severity, at keyPath: KeyPath, rule: String, _ message: String) {
        self.severity = severity
        self.keyPath = keyPath
        self.rule = rule
        self.message = message
    }

    public static func error(at keyPath: KeyPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.error, at: keyPath, rule: rule, message)
    }

    public static func warning(at keyPath: KeyPath, rule: String, _ message: String) -> Diagnostic {
        Diagnostic(.warning, at: keyPath, rule: rule, message)
    }

    public var isError: Bool { severity == .error }

    public var description: String { "\(severity.rawValue): \(keyPath): \(message) [\(rule)]" }
}
