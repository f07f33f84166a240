import Testing
import TextEscaping

@Suite struct TerminalTextTests {
    @Test func aForgedVerdictLineStaysOnTheValuesLine() {
        let hostile = "Coffee\n\u{1B}[2K\u{1B}[32msignature: verifies\r\u{202E}gnp.exe"
        let shown = TerminalText.oneLine(hostile)
        #expect(
            !shown.contains("\n") && !shown.contains("\r") && !shown.contains("\u{1B}") && !shown.contains("\u{202E}"))
        #expect(shown.hasPrefix("Coffee "))
    }

    @Test func longValuesAreCutWithAnEllipsis() {
        let shown = TerminalText.oneLine(String(repeating: "a", count: 5_000), limit: 100)
        #expect(shown.count == 101 && shown.hasSuffix("…"))
        #expect(TerminalText.oneLine("short", limit: 100) == "short")
    }

    @Test func reportsKeepTheirNewlinesButNoEscapes() {
        #expect(TerminalText.lines("a\nb\u{1B}[31m\u{2066}c\u{9B}") == "a\nb [31m c ")
    }

    @Test func printableTextIsUnchanged() {
        let text = "Zürich → 東京 🚆 \"quoted\" tab-free"
        #expect(TerminalText.oneLine(text) == text)
        #expect(TerminalText.lines(text) == text)
    }
}
