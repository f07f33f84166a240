import Testing

@testable import PassModel

/// Strings are written with runs of plain bytes copied at once and only
/// quotes, backslashes and control characters escaped.
@Suite struct JSONStringEscapingTests {
    @Test func escapesExactlyQuotesBackslashesAndControlCharacters() {
        #expect(JSONValue.string("plain").serializedString() == #""plain""#)
        #expect(JSONValue.string("").serializedString() == #""""#)
        #expect(JSONValue.string("a\"b\\c/d").serializedString() == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\"start and end\\").serializedString() == #""\"start and end\\""#)
        #expect(
            JSONValue.string("line\nfeed\r\ttab\u{01}\u{1F}").serializedString() == #""line\nfeed\r\ttab\u0001\u001f""#)
        #expect(JSONValue.string("Zürich → 東京 🎫").serializedString() == "\"Zürich → 東京 🎫\"")
    }

    @Test func everyStringComesBackAsItWasWritten() throws {
        // Seeded strings mixing plain runs with every kind of byte that needs escaping.
        let pieces = [
            "a", "bc", "\"", "\\", "\n", "\r", "\t", "\u{00}", "\u{07}", "\u{1F}", " ", "é", "🎫", "/", "\u{7F}",
        ]
        var state: UInt64 = 5
        for _ in 0..<2_000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for step in 0..<Int(state >> 60) + 1 {
                text += pieces[Int((state >> UInt64(step * 4 % 56)) % UInt64(pieces.count))]
            }
            let value = JSONValue.object(JSONObject([("k", .string(text))]))
            #expect(try JSONValue(parsing: value.serializedString()) == value, "\(text.debugDescription)")
        }
    }
}
