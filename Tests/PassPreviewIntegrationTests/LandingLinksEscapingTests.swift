import Foundation
import Testing

@testable import PassPreview

/// `passforge links` escapes its CSV and JSON byte by byte (a mail-merge of 100,000 rows escapes every
/// snippet); Foundation's JSON parser is the oracle for the JSON, RFC 4180's quoting for the CSV.
@Suite struct LandingLinksEscapingTests {
    static let texts = [
        "https://passes.example.com/download/Ab-_0123.html", "",
        LandingLinks.snippet(
            landing: "https://a.example/x.html", download: "https://a.example/x.pkpass", badge: nil, isOrder: false),
        "quote \" backslash \\ tab \t line\nreturn\r bell \u{7} nul \u{0} <script> Zürich 東京 🎫",
    ]

    @Test func jsonStringsParseBackToTheText() throws {
        for text in Self.texts {
            let json = LandingLinks.jsonString(text)
            #expect(!json.dropFirst().dropLast().contains("<"))
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
            #expect(parsed as? String == text)
        }
    }

    @Test func csvFieldsAreQuotedWithTheirQuotesDoubled() {
        #expect(LandingLinks.csvField("plain") == "plain")
        #expect(LandingLinks.csvField("a,b") == "\"a,b\"")
        #expect(LandingLinks.csvField("say \"hi\"\r\n") == "\"say \"\"hi\"\"\r\n\"")
        #expect(LandingLinks.csvField("=1+1") == "'=1+1")
        #expect(LandingLinks.csvField("Zürich, \"東京\"") == "\"Zürich, \"\"東京\"\"\"")
    }
}
