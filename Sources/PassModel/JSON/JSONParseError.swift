/// A problem in JSON text, with the line and column (both 1-based) where it was found.
package struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is, for code that treats some differently;
    /// `message` is for people.
    package enum Kind: Sendable, Hashable {
        /// The text is not JSON: a stray character, a missing or trailing
        /// comma, a malformed number, string or escape, a file that ends early.
        case syntax
        /// A key appears twice in one object; which value wins would be a guess.
        case duplicateKey
        /// Nested deeper than ``JSONSyntaxParser/maximumDepth``.
        case tooDeep
        /// A number too large for a `Double`.
        case numberOutOfRange
    }

    package var kind: Kind
    package var line: Int
    package var column: Int
    package var message: String

    package init(_ kind: Kind, line: Int, column: Int, message: String) {
        self.kind = kind
        self.line = line
        self.column = column
        self.message = message
    }

    package var description: String { "line \(line), column \(column): \(message)" }
}
