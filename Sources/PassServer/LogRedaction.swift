import Foundation

/// What may reach a log line: no secret (token, key, password) ever does.
///
/// - Tokens travel only in the Authorization header, which is never logged;
///   a device log message that quotes one is cut at `ApplePass `.
/// - The device library identifier is Apple's second shared secret ("Use this
///   secret to authenticate the call for the serial numbers"), so logs show
///   only its first characters.
/// - Device log messages become exactly one line, of bounded length, with
///   control characters (and so forged newlines and escape sequences) and
///   bidirectional overrides replaced.
package enum LogRedaction {
    package static func device(_ identifier: some StringProtocol) -> String {
        identifier.count <= 6 ? String(identifier) : identifier.prefix(6) + "…"
    }

    /// A request path with the device identifier shortened, cut to 200 characters, on one line.
    package static func path(_ path: some StringProtocol) -> String {
        var segments = String(path).split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
        if let devices = segments.firstIndex(of: "devices"), devices + 1 < segments.count {
            segments[devices + 1] = device(segments[devices + 1])
        }
        return oneLine(segments.joined(separator: "/"), limit: 200)
    }

    /// A device's log message: one line, at most `limit` characters, no token.
    package static func message(_ text: String, limit: Int) -> String {
        var text = Substring(text)
        if let range = text.range(of: "ApplePass ", options: .caseInsensitive) {
            text = Substring(text[..<range.lowerBound] + "ApplePass [redacted]")
        }
        return oneLine(text, limit: limit)
    }

    /// C0, DEL and C1 controls, the Unicode line and paragraph separators,
    /// and the bidirectional formatting characters (Unicode's Bidi_Control:
    /// ALM, LRM, RLM, LRE…RLO, LRI…PDI), which reorder what a terminal shows
    /// ("Trojan Source").
    static func isNeutralized(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    static func oneLine(_ text: some StringProtocol, limit: Int) -> String {
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
}
