import Crypto
package import PassModel

/// `Authorization: ApplePass <authenticationToken>` (Apple: "The value is the
/// word ApplePass, followed by a space, followed by the authenticationToken
/// key of the pass"), and for an order `Authorization: AppleOrder
/// <authenticationToken>` (Apple, "Retrieve the latest version of an order").
/// The scheme must be the one of the item's kind: `ApplePass` on an order, or
/// `AppleOrder` on a pass, is refused like a wrong token.
///
/// The build state keeps only SHA-256 of each token. A presented token is
/// hashed and compared in constant time, and an unknown pass is compared
/// against a dummy digest, so neither timing nor status tells whether a pass
/// exists.
package enum PassAuthentication {
    /// Tokens longer than this are malformed (Apple requires at least 16 characters).
    package static let maximumTokenLength = 512

    /// The kind whose scheme the Authorization value names (`ApplePass`,
    /// `AppleOrder`) and its token, or nil when the header is missing or
    /// malformed. The caller compares the token whatever the scheme, against
    /// nothing when the scheme is not the item's kind: a refusal takes the same
    /// time whether the item exists or not.
    ///
    /// The scheme is matched exactly as Apple spells it, `ApplePass` or
    /// `AppleOrder`: `applepass` is malformed. RFC 9110 §11.1 calls an
    /// authentication scheme case-insensitive, but Wallet sends only Apple's
    /// spelling, and the shipped nginx and Caddy configs, which answer the same
    /// GETs from the tree, match it exactly: every server gives one answer.
    package static func credentials(fromAuthorization value: String?) -> (scheme: WalletItemKind, token: Substring)? {
        guard let value else { return nil }
        for kind in WalletItemKind.allCases {
            if let token = token(fromAuthorization: value, scheme: kind.authorizationScheme) { return (kind, token) }
        }
        return nil
    }

    private static func token(fromAuthorization value: String, scheme: String) -> Substring? {
        guard value.utf8.count > scheme.utf8.count + 1, value.utf8.starts(with: scheme.utf8) else { return nil }
        var rest = value.dropFirst(scheme.count)
        guard rest.first == " " else { return nil }
        while rest.first == " " { rest = rest.dropFirst() }
        while rest.last == " " { rest = rest.dropLast() }
        guard (1...maximumTokenLength).contains(rest.utf8.count),
            rest.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E })
        else { return nil }
        return rest
    }

    /// SHA-256 of a token, as the build state stores it (hex there, bytes here).
    package static func digest(of token: some StringProtocol) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// Whether `token` hashes to `expected`; `expected` nil (no such pass, or
    /// a pass without a token) is compared too, and always fails.
    package static func verify(_ token: some StringProtocol, expected: [UInt8]?) -> Bool {
        let presented = digest(of: token)
        let reference = expected ?? dummyDigest
        guard reference.count == presented.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<presented.count { difference |= presented[index] ^ reference[index] }
        return difference == 0 && expected != nil
    }

    /// 32 bytes from hex, or nil.
    package static func digest(fromHex hex: String) -> [UInt8]? {
        let bytes = Array(hex.utf8)
        guard bytes.count == 64 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }

    private static let dummyDigest = [UInt8](repeating: 0xA5, count: 32)

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
