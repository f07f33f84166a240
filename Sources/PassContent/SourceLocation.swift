/// A position in a file that a person edits: `content/flights/ba.yml:12:7`.
package struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The path as the user would type it (relative to the working directory when possible).
    package var file: String
    /// 1-based line; 0 when the problem concerns the whole file.
    package var line: Int
    /// 1-based column; 0 when unknown.
    package var column: Int

    package init(file: String, line: Int = 0, column: Int = 0) {
        self.file = file
        self.line = line
        self.column = column
    }

    package var description: String {
        guard line > 0 else { return file }
        return column > 0 ? "\(file):\(line):\(column)" : "\(file):\(line)"
    }
}
