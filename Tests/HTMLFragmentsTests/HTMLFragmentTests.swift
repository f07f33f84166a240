import Testing

@testable import HTMLFragments

/// The libxml2 wrapper: what a fragment of tag soup reads as, with libxml2's HTML parser.
@Suite struct HTMLFragmentTests {
    func element(_ name: String, _ attributes: [(String, String)] = [], _ children: [HTMLNode] = []) -> HTMLNode {
        .element(
            HTMLElement(
                name: name, attributes: attributes.map { HTMLAttribute(name: $0.0, value: $0.1) }, children: children))
    }

    @Test func linksAndTextInOrderWithEntitiesDecodedAndNamesInLowerCase() throws {
        let fragment = try HTMLFragment(
            parsing: "See <A HREF='https://x.example/?a=1&amp;b=2'>our &amp; terms</a> or &#106;ust text.")
        #expect(
            fragment.nodes == [
                .text("See "), element("a", [("href", "https://x.example/?a=1&b=2")], [.text("our & terms")]),
                .text(" or just text."),
            ])
        #expect(fragment.discardedTags.isEmpty && fragment.strayEndTags.isEmpty)
    }

    @Test func leadingTextStaysTextAndALoneLessThanIsText() throws {
        #expect(try HTMLFragment(parsing: "plain").nodes == [.text("plain")])
        #expect(try HTMLFragment(parsing: "1 < 2 but 3 > 2").nodes == [.text("1 < 2 but 3 > 2")])
        #expect(try HTMLFragment(parsing: "").nodes == [])
    }

    @Test func everyOtherKindOfMarkupIsSeen() throws {
        let fragment = try HTMLFragment(
            parsing: "<p>a</p><!-- note --><?php x ?><img src=x onerror=alert(1)><script>alert(1)</script>")
        #expect(
            fragment.nodes == [
                element("p", [], [.text("a")]), .comment(" note "), .processingInstruction("php"),
                element("img", [("src", "x"), ("onerror", "alert(1)")]), element("script", [], [.text("alert(1)")]),
            ])
    }

    @Test func contentAfterAClosingHTMLTagIsStillRead() throws {
        let fragment = try HTMLFragment(parsing: "x</body></html><script>alert(1)</script>")
        #expect(fragment.nodes.contains(element("script", [], [.text("alert(1)")])), "\(fragment.nodes)")
    }

    @Test func aBodyOrHTMLTagInsideTheFragmentIsReportedNotLost() throws {
        let body = try HTMLFragment(parsing: "<body onload=\"steal()\">hi")
        #expect(body.discardedTags == ["body"] && body.nodes == [.text("hi")])
        #expect(try HTMLFragment(parsing: "<html lang=x>hi").discardedTags == ["html"])
        #expect(try HTMLFragment(parsing: "x</p>").strayEndTags == ["p"])
    }

    @Test func aNULCharacterAndDeepNestingAreRefused() {
        #expect(throws: HTMLFragmentError.nulCharacter) { try HTMLFragment(parsing: "ok\u{0}<script>x</script>") }
        // libxml2 stops at 256 levels ("Excessive depth in document"): what follows would go unseen, so it is refused.
        let deep = String(repeating: "<b>", count: 300) + "<script>alert(1)</script>"
        #expect(throws: HTMLFragmentError.tooDeep) { try HTMLFragment(parsing: deep) }
        #expect(throws: Never.self) { try HTMLFragment(parsing: String(repeating: "<b>", count: 200)) }
    }

    @Test func markupTheParserReadsAroundIsReported() throws {
        #expect(
            try HTMLFragment(parsing: "<a href=\"https://x.example\" <b onclick=x>k</a>").malformedMarkup.isEmpty
                == false)
        #expect(try HTMLFragment(parsing: "<a href=\"javascript:x>k</a>").malformedMarkup.isEmpty == false)
        #expect(try HTMLFragment(parsing: "x <!-- never closed").malformedMarkup.isEmpty == false)
        // A lone ampersand or less-than sign is text, as in a browser.
        let text = try HTMLFragment(parsing: "Fish & chips < 5 €")
        #expect(text.malformedMarkup.isEmpty && text.nodes == [.text("Fish & chips < 5 €")])
    }

    @Test func textOfANodeIsEverythingAReaderSees() throws {
        let fragment = try HTMLFragment(parsing: "<a href='https://x.example'><b>bold</b> link<!-- hidden --></a>")
        #expect(fragment.nodes.first?.text == "bold link")
    }

    @Test func parsingIsSafeFromManyThreadsAtOnce() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let fragment = try HTMLFragment(
                        parsing: "<body onload=x>\(index) <a href='https://x.example/\(index)'>l</a></p>")
                    return fragment.discardedTags == ["body"] && fragment.strayEndTags == ["p"]
                        && fragment.nodes.count == 2
                }
            }
            for try await result in group { #expect(result) }
        }
    }
}
