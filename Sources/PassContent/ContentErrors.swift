/// Thrown when loading stops on errors; carries every problem found, not just the first.
package struct ContentErrors: Error, Sendable, CustomStringConvertible {
    package var diagnostics: [ContentDiagnostic]
    package init(_ diagnostics: [ContentDiagnostic]) { self.diagnostics = diagnostics }
    package var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
