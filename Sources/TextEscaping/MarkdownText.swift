/// Text from outside (a pass's field values, content file names, keys, git
/// revisions) made inert in Markdown that GitHub renders (GitHub Flavored
/// Markdown: CommonMark with tables, autolinks, strikethrough and the tag
/// filter, then GitHub's own @mention and #reference linking).
///
/// Backslash escapes are not enough there: GitHub links `@name` and
/// `https://…` in text after rendering, whatever the escapes were. Text in a
/// code span is shown as it is: no emphasis, link, image, autolink, mention
/// or HTML inside it (CommonMark 0.31, "Code spans"; GitHub skips `<code>`
/// when it links mentions). So every outside string goes into a code span
/// whose backtick fence is longer than any run of backticks in it, so that it
/// cannot be closed from inside.
public enum MarkdownText {
    /// `text` as a code span, on one line: `` `value` ``, or ``` `` a`b `` ```.
    ///
    /// - Control, line-breaking and bidirectional characters become spaces
    ///   (``TerminalText/isNeutralized(_:)``): a newline would end the list
    ///   item or table row and let the rest be read as Markdown (`<!--` hiding
    ///   everything after it), and bidi controls would reorder what a reviewer
    ///   reads.
    /// - `limit` bounds the shown length, as ``TerminalText/oneLine(_:limit:)``.
    /// - `inTable`: a `|` is written `\|`, which the GFM table extension
    ///   reads as a `|` of the cell even inside a code span ("Tables
    ///   (extension)", example 200); outside a table that would show the backslash.
    public static func code(_ text: some StringProtocol, inTable: Bool = false, limit: Int = 1_000) -> String {
        var content = ""
        for character in TerminalText.oneLine(text, limit: limit) {
            if inTable && character == "|" { content += "\\" }
            content.append(character)
        }
        let fence = String(repeating: "`", count: longestBacktickRun(in: content) + 1)
        // A value that is empty, or starts or ends with a backtick or a space, gets one space inside each
        // end: CommonMark strips exactly one from each end when both are there, so it is shown as it is.
        let needsPadding =
            content.isEmpty || content.hasPrefix("`") || content.hasSuffix("`") || content.hasPrefix(" ")
            || content.hasSuffix(" ")
        let padding = needsPadding ? " " : ""
        return fence + padding + content + padding + fence
    }

    /// The length of the longest run of backticks in `text`.
    static func longestBacktickRun(in text: String) -> Int {
        var longest = 0
        var run = 0
        for scalar in text.unicodeScalars {
            run = scalar == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }
}
