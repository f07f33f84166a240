import Foundation
import PassModel
import TextEscaping

/// What may reach a log line: no secret (token, key, password) ever does.
///
/// - Tokens travel only in the Authorization header, which is never logged;
///   a device log message that quotes one is cut at `ApplePass ` (or `AppleOrder `).
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
        for scheme in WalletItemKind.allCases.map(\.authorizationScheme) {
            if let range = text.range(of: scheme + " ", options: .caseInsensitive) {
                text = Substring(String(text[..<range.lowerBound]) + scheme + " [redacted]")
            }
        }
        return oneLine(text, limit: limit)
    }

    static func oneLine(_ text: some StringProtocol, limit: Int) -> String {
        TerminalText.oneLine(text, limit: limit)
    }
}
