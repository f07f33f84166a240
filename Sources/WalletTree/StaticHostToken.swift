/// The authentication tokens a static host can check by itself: it maps the
/// `Authorization: ApplePass <token>` header to a file name holding the token,
/// so the token must be safe in a path (no `/`, no `.`, nothing to escape)
/// and short enough for a file name. Derived tokens (43 characters of
/// base64url) always are. Wallet asks for at least 16 characters ("Pass",
/// authenticationToken).
package enum StaticHostToken {
    package static let minimumLength = 16
    package static let maximumLength = 100
    package static let description = "16 to 100 characters of A–Z, a–z, 0–9, '-' and '_'"

    package static func isValid(_ token: some StringProtocol) -> Bool {
        (minimumLength...maximumLength).contains(token.utf8.count)
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }
}
