import PassModel

/// The strict patterns every path parameter must match before any file or
/// database is touched. Plain byte checks: no
/// percent-decoding ever happens, so `%2F`, `%00` and `%2E%2E` simply fail.
package enum PathRules {
    /// Apple: "A unique identifier you use to identify and authenticate the
    /// device". Devices send hex-like identifiers; `[A-Za-z0-9]{1,64}`.
    package static func isDeviceLibraryIdentifier(_ value: some StringProtocol) -> Bool {
        let bytes = value.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy(isAlphanumeric)
    }

    /// A reverse-DNS pass type identifier: `[A-Za-z0-9][A-Za-z0-9.-]{0,254}`, no `..`.
    package static func isPassTypeIdentifier(_ value: some StringProtocol) -> Bool {
        let bytes = Array(value.utf8)
        guard (1...255).contains(bytes.count), isAlphanumeric(bytes[0]) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
            && !containsDotDot(bytes)
    }

    /// The serial numbers a build accepts: `[A-Za-z0-9][A-Za-z0-9._~-]{0,127}`.
    /// Starting with a letter or digit, it is never `.` or `..`.
    package static func isSerialNumber(_ value: some StringProtocol) -> Bool { IdentifierPatterns.isIdentifier(value) }

    /// A path segment under `download/` (a base64url capability may start
    /// with `-` or `_`): `[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,199}`, never `.` or `..`.
    static func isDownloadSegment(_ value: some StringProtocol) -> Bool {
        let bytes = Array(value.utf8)
        guard (1...200).contains(bytes.count), bytes[0] != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy(isUnreserved)
    }

    /// An offer's name, as passforge.yml's `offers:` defines it: `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
    package static func isOfferName(_ value: some StringProtocol) -> Bool { IdentifierPatterns.isOfferName(value) }

    /// RFC 3986 unreserved characters: never percent-encoded by a client.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "-")
    }

    /// An APNs device token as Wallet sends it: hex, 16 to 200 bytes (32 today;
    /// Apple warns the length may change), so 32 to 400 hex digits.
    package static func isPushToken(_ value: some StringProtocol) -> Bool {
        let bytes = value.utf8
        return (32...400).contains(bytes.count) && bytes.count % 2 == 0 && bytes.allSatisfy(isHexDigit)
    }

    /// For `--base-path`: unreserved characters and `/`.
    package static func isUnreservedOrSlash(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || byte == UInt8(ascii: "/")
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool { IdentifierPatterns.isAlphanumeric(byte) }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private static func containsDotDot(_ bytes: [UInt8]) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }
    }
}
