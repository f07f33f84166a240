import Foundation
import TestSupport
import Testing
import TextEscaping

/// Renders GitHub Flavored Markdown with the real cmark-gfm (Debian package `cmark-gfm`), with the
/// extensions GitHub enables.
func renderGFM(_ markdown: String) throws -> String {
    let result = try runProcess(
        "cmark-gfm", ["-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"],
        input: Data(markdown.utf8))
    #expect(result.status == 0, "cmark-gfm failed; install it (make deps): \(result.stderr)")
    return result.stdout
}

/// What must not survive in rendered Markdown built from hostile values: links, images,
/// autolinks, HTML of the input, and text outside `<code>` that GitHub would link as a mention.
func liveMarkup(in html: String) -> [String] {
    var found: [String] = []
    for tag in ["<a", "<img", "<script", "<iframe", "<!--", "<del", "<em", "<strong", "<h1", "<h2", "<details", "<div"]
    where html.contains(tag) {
        found.append(tag)
    }
    // Outside code spans no `@`, `://` or `www.` (GitHub links mentions and URLs in text after rendering).
    var outsideCode = html
    while let start = outsideCode.range(of: "<code>"),
        let end = outsideCode.range(of: "</code>", range: start.upperBound..<outsideCode.endIndex)
    {
        outsideCode.removeSubrange(start.lowerBound..<end.upperBound)
    }
    for text in ["@", "://", "www."] where outsideCode.contains(text) { found.append("text \(text)") }
    return found
}

@Suite struct MarkdownTextTests {
    static let hostileValues = [
        "![x](https://evil.example/track.png)",
        "[click](https://phish.example)",
        "@mention and @org/team",
        "<img src=x onerror=alert(1)>",
        "https://evil.example/raw www.evil.example mail@evil.example",
        "``key` with ```backticks",
        "new\n\n<!--\n.yml",
        "<script>alert(1)</script>",
        "**bold** _em_ ~~del~~ # heading",
        "cell | break | more",
        "&lt;img src=x&gt; &#64;entity",
        "`",
        " leading and trailing ",
        "back\\slash\\",
        "\u{202E}gnp.exe\u{1B}[31m",
    ]

    @Test func theFenceIsLongerThanEveryBacktickRunInside() {
        #expect(MarkdownText.code("plain") == "`plain`")
        #expect(MarkdownText.code("a`b") == "``a`b``")
        #expect(MarkdownText.code("```") == "```` ``` ````")
        #expect(MarkdownText.code(" x") == "`  x `")
        #expect(MarkdownText.code("") == "`  `")
        #expect(MarkdownText.code("a | b", inTable: true) == "`a \\| b`")
        #expect(MarkdownText.code("a | b") == "`a | b`")
    }

    @Test func controlAndBidiCharactersNeverReachTheMarkdown() {
        let shown = MarkdownText.code("new\n\n<!--\r\n.yml\u{2028}\u{202E}\u{1B}")
        #expect(!shown.unicodeScalars.contains { TerminalText.isNeutralized($0) })
        #expect(MarkdownText.code(String(repeating: "x", count: 5_000), limit: 10).count < 30)
    }

    @Test func everyValueRendersAsItsTextInACodeSpan() throws {
        for value in Self.hostileValues {
            let html = try renderGFM("- value: \(MarkdownText.code(value))\n- AFTER\n")
            #expect(liveMarkup(in: html).isEmpty, "\(value): \(html)")
            #expect(html.contains("<li>AFTER</li>"), "\(value): \(html)")
            // The code span holds the value, HTML-escaped, on one line.
            let expected = TerminalText.oneLine(value).replacingOccurrences(of: "&", with: "&amp;")
                .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
            #expect(html.contains("<code>\(expected)</code>"), "\(value): \(html)")
        }
    }

    @Test func tableCellsKeepTheirColumnsAndTheRowsAfterThem() throws {
        var markdown = "| field | before | after |\n|---|---|---|\n"
        for value in Self.hostileValues {
            markdown +=
                "| \(MarkdownText.code(value, inTable: true)) | \(MarkdownText.code(value, inTable: true)) | x |\n"
        }
        markdown += "| LAST | row | here |\n\nAFTER THE TABLE\n"
        let html = try renderGFM(markdown)
        #expect(liveMarkup(in: html).isEmpty, "\(html)")
        #expect(html.contains("<td>LAST</td>") && html.contains("<p>AFTER THE TABLE</p>"), "\(html)")
        // Every row has its three cells: none was split by a `|` or ended by a newline.
        #expect(html.components(separatedBy: "<tr>").count - 1 == Self.hostileValues.count + 2, "\(html)")
        #expect(html.components(separatedBy: "<td>").count - 1 == 3 * (Self.hostileValues.count + 1), "\(html)")
        #expect(html.contains("<code>cell | break | more</code>"), "\(html)")
    }
}
