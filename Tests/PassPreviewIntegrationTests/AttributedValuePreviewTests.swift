import Foundation
import PassBuild
import PassModel
import PassPreview
import PassRender
import Testing

/// A back field's attributedValue on the preview's pass page: read by libxml2, its https, http, tel and mailto
/// links become links with the target escaped, and everything else (tags, other targets) is text.
@Suite("preview of attributedValue links")
struct AttributedValuePreviewTests {
    func page(attributedValue: String) throws -> String {
        let field: JSONValue = .object(
            JSONObject([
                ("key", "terms"), ("label", "Terms"), ("value", "plain"),
                ("attributedValue", .string(attributedValue)),
            ]))
        let json: JSONValue = .object(
            JSONObject([
                ("description", "Card"), ("organizationName", "Shop"),
                ("generic", .object(JSONObject([("backFields", .array([field]))]))),
            ]))
        let pass = UnsignedPass(
            passTypeIdentifier: "pass.com.example.shop", serialNumber: "C-1", templateName: "card",
            sourceFile: "content/card.yml", passJSON: json, files: [], warnings: [])
        let html = PassPage(pass: pass).html()
        // The back field's definition list entry (the page also embeds pass.json as data, escaped for a script).
        let start = try #require(html.range(of: "data-key=\"terms\"><dt>Terms</dt><dd>"))
        let end = try #require(html.range(of: "</dd>", range: start.upperBound..<html.endIndex))
        return String(html[start.upperBound..<end.lowerBound])
    }

    @Test("an allowed link becomes a link with its target escaped; the value it overrides is not shown")
    func allowedLinks() throws {
        #expect(
            try page(attributedValue: "See <a href='https://x.example/?a=1&amp;b=\"2\"'>our &amp; terms</a>.")
                == "See <a href=\"https://x.example/?a=1&amp;b=&quot;2&quot;\" rel=\"noopener noreferrer\">our &amp; terms</a>."
        )
        #expect(
            try page(attributedValue: "<a href=\"tel:+4712345678\">call</a>")
                == "<a href=\"tel:+4712345678\" rel=\"noopener noreferrer\">call</a>")
    }

    @Test(
        "hostile markup and targets stay text",
        arguments: [
            ("<a href=\"javascript:alert(1)\">click</a>", "click"),
            ("<script>alert(1)</script>x", "alert(1)x"),
            ("<img src=x onerror=alert(1)>y", "y"),
            (
                "<a href=\"https://x.example\" onclick=\"steal()\">k</a>",
                "<a href=\"https://x.example\" rel=\"noopener noreferrer\">k</a>"
            ),
            ("<b>&lt;script&gt;</b>", "&lt;script&gt;"),
            ("<a href=\"data:text/html,<script>x</script>\">d</a>", "d"),
        ])
    func hostileMarkup(input: String, shown: String) throws {
        let html = try page(attributedValue: input)
        #expect(html == shown)
        #expect(
            !html.contains("<script") && !html.contains("onerror") && !html.contains("javascript:")
                && !html.contains("onclick"))
    }
}
