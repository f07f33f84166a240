/// The rule for which relative paths of the output tree belong to the build:
/// the one a build's journal, a publish and a state taken from a destination
/// (`--state-from`) all check, so that a damaged or hostile build state can
/// never reach `v1/devices/`, `.passforge/` or anything outside the tree.
///
/// - `v1/passes/<passTypeIdentifier>/<serialNumber>`
/// - `by-token/<passTypeIdentifier>/<serialNumber>.<authenticationToken>`
/// - `download/<capability>.pkpass` and `download/<passTypeIdentifier>/<serialNumber>.pkpass`
/// - `download/<capability>.pkpasses` (a bundle of passes)
///
/// A pass type identifier is `[A-Za-z0-9][A-Za-z0-9.-]{0,254}`, a serial number
/// `[A-Za-z0-9][A-Za-z0-9._~-]{0,127}`, a token `[A-Za-z0-9_-]{16,100}`, a
/// capability `[A-Za-z0-9_-]{1,100}`. None holds a slash, a newline or a
/// non-ASCII byte, and none starts with a dot or a dash: no path made of them
/// climbs out of its folder or hides as a dotfile.
package enum TreeLayout {
    /// Whether the build (and a publish) may write or delete `path`, relative to the output folder.
    package static func isBuildOwned(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { isBuildOwned(utf8: $0) }
    }

    /// `v1/passes/<type>/<serial>`.
    package static func passPath(type: String, serial: String) -> String { "v1/passes/\(type)/\(serial)" }

    /// `by-token/<type>/<serial>.<token>`.
    package static func tokenPath(type: String, serial: String, token: String) -> String { "by-token/\(type)/\(serial).\(token)" }

    /// `download/<type>/<serial>.pkpass`.
    package static func publicDownloadPath(type: String, serial: String) -> String { "download/\(type)/\(serial).pkpass" }

    /// `download/<capability>.pkpass`, or with `bundle`, `download/<capability>.pkpasses`.
    package static func isCapabilityDownload(_ path: String, bundle: Bool = false) -> Bool {
        var path = path
        return path.withUTF8 { utf8 in
            let parts = utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard parts.count == 2, bytesEqual(parts[0], "download") else { return false }
            return capabilityName(parts[1], suffix: bundle ? ".pkpasses" : ".pkpass")
        }
    }

    /// `by-token/<type>/<serial>.<token>` for this pass.
    package static func isTokenPath(_ path: String, type: String, serial: String) -> Bool {
        let prefix = "by-token/\(type)/\(serial)."
        return path.utf8.starts(with: prefix.utf8) && isToken(path.utf8.dropFirst(prefix.utf8.count))
    }

    package static func isPassType(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isPassType($0[...]) }
    }

    package static func isSerial(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isSerial($0[...]) }
    }

    static func isBuildOwned(utf8 path: UnsafeBufferPointer<UInt8>) -> Bool {
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        switch parts.count {
        case 4:
            return bytesEqual(parts[0], "v1") && bytesEqual(parts[1], "passes") && isPassType(parts[2]) && isSerial(parts[3])
        case 3 where bytesEqual(parts[0], "by-token"):
            let name = parts[2]
            guard isPassType(parts[1]), let dot = name.lastIndex(of: UInt8(ascii: ".")) else { return false }
            return isSerial(name[..<dot]) && isToken(name[(dot + 1)...])
        case 2 where bytesEqual(parts[0], "download"):
            return capabilityName(parts[1], suffix: ".pkpass") || capabilityName(parts[1], suffix: ".pkpasses")
        case 3 where bytesEqual(parts[0], "download"):
            let name = parts[2]
            guard name.count > 7, bytesEqual(name[(name.endIndex - 7)...], ".pkpass") else { return false }
            return isPassType(parts[1]) && isSerial(name[..<(name.endIndex - 7)])
        default:
            return false
        }
    }

    static func isPassType<Bytes: Collection<UInt8>>(_ text: Bytes) -> Bool {
        guard let first = text.first, isAlphanumeric(first), text.count <= 255 else { return false }
        return text.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    static func isSerial<Bytes: Collection<UInt8>>(_ text: Bytes) -> Bool {
        guard let first = text.first, isAlphanumeric(first), text.count <= 128 else { return false }
        return text.allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "-")
        }
    }

    static func isToken<Bytes: Collection<UInt8>>(_ text: Bytes) -> Bool {
        (16...100).contains(text.count) && text.allSatisfy(isBase64URL)
    }

    private static func capabilityName(_ name: Slice<UnsafeBufferPointer<UInt8>>, suffix: StaticString) -> Bool {
        let length = suffix.utf8CodeUnitCount
        guard name.count > length, bytesEqual(name[(name.endIndex - length)...], suffix) else { return false }
        let capability = name[..<(name.endIndex - length)]
        return capability.count <= 100 && capability.allSatisfy(isBase64URL)
    }

    private static func bytesEqual(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && bytes.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
