/// Thrown when loading stops on errors; carries every problem found, not just the first.
public struct ContentErrors: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ContentDiagnostic]
    public init(_ diagnostics: [ContentDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
