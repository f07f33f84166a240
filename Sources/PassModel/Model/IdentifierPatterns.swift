/// The patterns of the names passforge puts in paths and URLs, checked on
/// the bytes with no allocation (a build checks several hundred thousand).
///
/// None of them holds a slash, a newline or a non-ASCII byte, and none starts
/// with a dot or a dash: no path made of them climbs out of its folder or
/// hides as a dotfile.
package enum IdentifierPatterns {
    /// A pass or order type identifier.
    package static let typeIdentifier = "[A-Za-z0-9][A-Za-z0-9.-]{0,254}"
    /// A serial number or an order identifier.
    package static let identifier = "[A-Za-z0-9][A-Za-z0-9._~-]{0,127}"
    /// An authentication token a static host can map to a file name.
    package static let token = "[A-Za-z0-9_-]{16,100}"
    /// A DeviceCheck offer's name (passforge.yml `offers:`): safe in a URL path and a metric label.
    package static let offerName = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}"

    package static func isTypeIdentifier(_ text: some StringProtocol) -> Bool { check(text, isTypeIdentifier) }
    package static func isIdentifier(_ text: some StringProtocol) -> Bool { check(text, isIdentifier) }
    package static func isToken(_ text: some StringProtocol) -> Bool { check(text, isToken) }
    package static func isOfferName(_ text: some StringProtocol) -> Bool { check(text, isOfferName) }

    package static func isTypeIdentifier(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= 255, isAlphanumeric(bytes[range.lowerBound]) else { return false }
        for index in range
        where !(isAlphanumeric(bytes[index]) || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "-"))
        {
            return false
        }
        return true
    }

    package static func isIdentifier(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= 128, isAlphanumeric(bytes[range.lowerBound]) else { return false }
        for index in range {
            let byte = bytes[index]
            guard
                isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "~")
                    || byte == UInt8(ascii: "-")
            else { return false }
        }
        return true
    }

    package static func isToken(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard (16...100).contains(range.count) else { return false }
        for index in range where !isBase64URL(bytes[index]) { return false }
        return true
    }

    package static func isOfferName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= 64, isAlphanumeric(bytes[range.lowerBound]) else { return false }
        for index in range {
            let byte = bytes[index]
            guard
                isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "-")
            else { return false }
        }
        return true
    }

    package static func isBase64URL(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    package static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private static func check(_ text: some StringProtocol, _ rule: (UnsafeBufferPointer<UInt8>, Range<Int>) -> Bool)
        -> Bool
    {
        var text = String(text)
        return text.withUTF8 { rule($0, 0..<$0.count) }
    }
}
