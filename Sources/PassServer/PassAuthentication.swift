import Crypto

/// `Authorization: ApplePass <authenticationToken>` (Apple: "The value is the
/// word ApplePass, followed by a space, followed by the authenticationToken
/// key of the pass").
///
/// The build state keeps only SHA-256 of each token. A presented token is
/// hashed and compared in constant time, and an unknown pass is compared
/// against a dummy digest, so neither timing nor status tells whether a pass
/// exists.
package enum PassAuthentication {
    /// Tokens longer than this are malformed (Apple requires at least 16 characters).
    package static let maximumTokenLength = 512

    /// The token of an `ApplePass` Authorization value, or nil when the header
    /// is missing or malformed. The scheme is case-insensitive (RFC 9110 §11.1).
    package static func token(fromAuthorization value: String?) -> Substring? {
        guard let value else { return nil }
        let scheme = "applepass"
        guard value.utf8.count > scheme.utf8.count + 1,
              value.utf8.prefix(scheme.utf8.count).elementsEqual(scheme.utf8, by: { asciiLower($0) == $1 }) else { return nil }
        var rest = value.dropFirst(scheme.count)
        guard rest.first == " " else { return nil }
        while rest.first == " " { rest = rest.dropFirst() }
        while rest.last == " " { rest = rest.dropLast() }
        guard (1...maximumTokenLength).contains(rest.utf8.count),
              rest.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else { return nil }
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

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
