import Testing

@testable import PassModel

/// A field's attributedValue as the rule and the preview read it: links with an allowed target, and text.
@Suite struct AttributedValueTests {
    @Test func linksWithAllowedTargetsAndTextInOrder() {
        let value = AttributedValue(
            "Call <a href='tel:+4712345678'>us</a> &amp; read <A HREF=\"https://x.example/t\">terms</a>.")
        #expect(value.problems == [])
        #expect(
            value.segments == [
                .text("Call "), .link(href: "tel:+4712345678", text: "us"), .text(" & read "),
                .link(href: "https://x.example/t", text: "terms"), .text("."),
            ])
    }

    @Test func refusedMarkupIsNamedAndShownAsText() {
        let value = AttributedValue(
            "<b>Bold</b> <a href=\"javascript:alert(1)\" onclick=\"x()\">click</a><script>s()</script>")
        #expect(value.problems == [.tag("b"), .attribute("onclick"), .target("javascript:alert(1)"), .tag("script")])
        #expect(value.segments == [.text("Bold click" + "s()")])
    }

    @Test func textWithoutMarkupSkipsTheParser() {
        #expect(AttributedValue("Gate 4 > Gate 3").segments == [.text("Gate 4 > Gate 3")])
        #expect(AttributedValue("").segments == [])
        #expect(AttributedValue("a\u{0}b <b>").problems.count == 1)
    }

    @Test func aReadFromTheCacheIsTheSameAsAFreshRead() {
        let text = "See <a href='https://x.example/\(#line)'>here</a><img src=x>"
        #expect(AttributedValue.reading(text) == AttributedValue(text))
        #expect(AttributedValue.reading(text) == AttributedValue(text))
        let long = String(repeating: "x", count: 5000) + "<a href='https://x.example'>l</a>"
        #expect(AttributedValue.reading(long) == AttributedValue(long))
    }
}
