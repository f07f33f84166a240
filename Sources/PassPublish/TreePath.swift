/// The relative paths a publish may write or delete: the build-owned part of
/// the output tree, and nothing else. Every path taken from a build state
/// (ours, or the one read from the destination) is checked before any file
/// is touched or any command is run, so a damaged or hostile state cannot
/// reach `v1/devices/`, `.passforge/` or anything outside the tree.
///
/// - `v1/passes/<passTypeIdentifier>/<serialNumber>`
/// - `by-token/<passTypeIdentifier>/<serialNumber>.<authenticationToken>`
/// - `download/<capability>.pkpass` and `download/<passTypeIdentifier>/<serialNumber>.pkpass`
/// - `download/<capability>.pkpasses` (a bundle of passes)
///
/// A pass type identifier is `[A-Za-z0-9][A-Za-z0-9.-]*`, a serial number
/// `[A-Za-z0-9][A-Za-z0-9._~-]{0,127}`, a token `[A-Za-z0-9_-]{16,100}`, a
/// capability `[A-Za-z0-9_-]{1,100}`. None holds a slash or a newline, and
/// none starts with a dot or a dash.
enum TreePath {
    static func check(_ path: String) throws(PublishError) {
        guard isBuildOwned(path) else {
            throw PublishError("refusing to touch \(path.debugDescription): it is not a pass, token link, download or bundle path of the output tree; the build state (or bundles.json) that lists it is damaged")
        }
    }

    static func isBuildOwned(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        switch (parts.count, parts.first) {
        case (4, "v1"):
            return parts[1] == "passes" && isPassType(parts[2]) && isSerial(parts[3])
        case (3, "by-token"):
            guard isPassType(parts[1]), let dot = parts[2].lastIndex(of: ".") else { return false }
            let name = parts[2]
            return isSerial(name[..<dot]) && isToken(name[name.index(after: dot)...])
        case (2, "download"):
            guard let name = parts[1].dropSuffix(".pkpass") ?? parts[1].dropSuffix(".pkpasses") else { return false }
            return !name.isEmpty && name.utf8.count <= 100 && name.utf8.allSatisfy(isBase64URL)
        case (3, "download"):
            guard let serial = parts[2].dropSuffix(".pkpass") else { return false }
            return isPassType(parts[1]) && isSerial(serial)
        default:
            return false
        }
    }

    static func isPassType(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isAlphanumeric(first), text.utf8.count <= 255 else { return false }
        return text.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    static func isSerial(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isAlphanumeric(first), text.utf8.count <= 128 else { return false }
        return text.utf8.allSatisfy { isAlphanumeric($0) || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "-")].contains($0) }
    }

    static func isToken(_ text: Substring) -> Bool {
        (16...100).contains(text.utf8.count) && text.utf8.allSatisfy(isBase64URL)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

private extension Substring {
    func dropSuffix(_ suffix: String) -> Substring? {
        hasSuffix(suffix) ? dropLast(suffix.count) : nil
    }
}
