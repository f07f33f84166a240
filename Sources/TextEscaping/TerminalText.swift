/// Text from outside (a pass, a content file, a device's log) made safe to
/// show on a terminal or in a log line.
///
/// A hostile value must not be able to move the cursor, recolour the screen,
/// reorder what is shown, or start a line of its own: a pass whose
/// description holds `"\n\u{1B}[32msignature: verifies"` would otherwise draw
/// a verdict that passforge never gave. So every value interpolated into
/// terminal output goes through `oneLine(_:limit:)`.
public enum TerminalText {
    /// C0, DEL and C1 controls (so newlines, carriage returns and the ESC of
    /// every escape sequence), the Unicode line and paragraph separators, and
    /// the bidirectional formatting characters (Unicode's Bidi_Control: ALM,
    /// LRM, RLM, LRE…RLO, LRI…PDI), which reorder what a terminal shows
    /// ("Trojan Source", CVE-2021-42574).
    public static func isNeutralized(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return true
        default: return false
        }
    }

    /// `text` on one line: every neutralized character becomes a space, and a
    /// text longer than `limit` Unicode scalars is cut there and ends in `…`
    /// (a 50 MB description prints as one bounded line, not 50 MB).
    public static func oneLine(_ text: some StringProtocol, limit: Int = 1_000) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            result.unicodeScalars.append(isNeutralized(scalar) ? " " : scalar)
            count += 1
        }
        return result
    }

    /// Multi-line text (a report passforge composed itself) with every
    /// neutralized character except the newline replaced: the last filter
    /// before bytes reach the terminal.
    public static func lines(_ text: some StringProtocol) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            result.unicodeScalars.append(scalar != "\n" && isNeutralized(scalar) ? " " : scalar)
        }
        return result
    }
}
