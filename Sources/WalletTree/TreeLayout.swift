package import PassModel

/// The rule for which relative paths of the output tree belong to the build:
/// the one a build's journal, a publish and a state taken from a destination
/// (`--state-from`) all check, so that a damaged or hostile build state can
/// never reach `v1/devices/`, `.passforge/` or anything outside the tree.
///
/// - `v1/passes/<passTypeIdentifier>/<serialNumber>`, `v1/orders/<orderTypeIdentifier>/<orderIdentifier>`
/// - `by-token/<typeIdentifier>/<identifier>.<authenticationToken>` (passes and orders)
/// - `download/<capability>.pkpass|.order` and `download/<typeIdentifier>/<identifier>.pkpass|.order`
/// - `download/<capability>.pkpasses` (a bundle of passes)
///
/// Every path of the tree is spelled here, once, relative to the output folder; `path(_:in:)` (and
/// `OutputFolder`, `OutputTree` over it) is the one place such a path is joined to a folder.
///
/// A pass type identifier is `[A-Za-z0-9][A-Za-z0-9.-]{0,254}`, a serial number
/// `[A-Za-z0-9][A-Za-z0-9._~-]{0,127}`, a token `[A-Za-z0-9_-]{16,100}`, a
/// capability `[A-Za-z0-9_-]{1,100}`. None holds a slash, a newline or a
/// non-ASCII byte, and none starts with a dot or a dash: no path made of them
/// climbs out of its folder or hides as a dotfile.
///
/// Checked on the bytes, with no allocation: a build checks every path of
/// its state and journal (several hundred thousand at 100,000 passes).
package enum TreeLayout {
    /// Whether the build (and a publish) may write or delete `path`, relative to the output folder.
    package static func isBuildOwned(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { isBuildOwned(utf8: $0) }
    }

    /// `.passforge/`: the build's own files in the output folder — its state, journal and staging,
    /// never served and never published except the three lists below. (The project has a
    /// `.passforge/` of its own too, for the development chain and the token secret: both hold
    /// what passforge keeps for itself, one per folder it works in.)
    package static let stateFolder = ".passforge"
    /// The build state: what the last build made (`BuildState`, the build's cache; readers read `PublishedIndex`).
    package static let statePath = "\(stateFolder)/state.json"
    /// passTypeIdentifier,serialNumber,download path of every pass and order, for mailings.
    package static let downloadsListPath = "\(stateFolder)/downloads.csv"
    /// The `.pkpasses` bundles of the last build (`BundleList`).
    package static let bundleListPath = "\(stateFolder)/bundles.json"
    /// A build's journal, between its staging and its commit (`OutputTree`).
    package static let journalPath = "\(stateFolder)/journal.json"
    /// Where a build stages its new files.
    package static let stagingFolder = "\(stateFolder)/staging"
    /// Where a build stages the files of its passes and orders: under their own paths in the tree, so that
    /// a folder the output does not have yet (a first build, or a CI build into a fresh output folder with
    /// `--state-from`) moves into place whole, in one rename instead of one per file.
    package static let stagedTreeFolder = "\(stagingFolder)/tree"
    /// Where `path` of the tree is staged (`stagedTreeFolder`).
    package static func stagedPath(of path: String) -> String { "\(stagedTreeFolder)/\(path)" }
    /// The last update tag whose changes the device index files show (`DeviceIndexFiles`).
    package static let indexedTagPath = "\(stateFolder)/indexed-tag"
    /// `relative` (a path of this layout) in `folder`, an output tree or a copy of one (a publish's
    /// destination): the one place a folder and a path of the tree are joined.
    package static func path(_ relative: some StringProtocol, in folder: String) -> String { "\(folder)/\(relative)" }

    /// The lock a build holds on its output folder (a publish and `--state-from` take it too).
    package static let buildLockPath = "\(stateFolder)/build.lock"
    /// The lock a publish holds on its destination folder.
    package static let publishLockPath = "\(stateFolder)/publish.lock"
    /// Cross-process locks of the device index shards.
    package static let indexLocksFolder = "\(stateFolder)/index-locks"
    /// The files a publish carries besides the items: the lists, then the state, which goes last.
    package static let publishedStateFiles = [bundleListPath, downloadsListPath, statePath]

    /// The folders that hold the build's files, deepest first: never removed when they empty.
    package static let topFolders =
        WalletItemKind.allCases.map { itemFolder($0) } + [downloadFolder, tokenFolder, "v1"]

    /// `v1/passes` or `v1/orders`.
    package static func itemFolder(_ kind: WalletItemKind) -> String { "v1/\(kind.webServiceFolder)" }

    /// `by-token`: the token-keyed names.
    package static let tokenFolder = "by-token"

    /// `v1/passes/<type>/<serial>` or `v1/orders/<type>/<identifier>`: where the web service's
    /// "get the latest version" answers from.
    package static func itemPath(kind: WalletItemKind, type: String, identifier: String) -> String {
        "\(itemFolder(kind))/\(type)/\(identifier)"
    }

    /// `by-token/<type>/<identifier>.<token>`: the same bytes under a name a static host finds from the
    /// `Authorization: ApplePass|AppleOrder <token>` header.
    package static func tokenPath(type: String, identifier: String, token: String) -> String {
        "\(tokenFolder)/\(type)/\(identifier).\(token)"
    }

    /// `download/<capability>.<extension>`: the unguessable add-to-Wallet link.
    package static func capabilityDownloadPath(capability: String, kind: WalletItemKind) -> String {
        "\(downloadFolder)/\(capability).\(kind.fileExtension)"
    }

    /// `download/<type>/<identifier>.<extension>`: the public link (`download: public`).
    package static func publicDownloadPath(kind: WalletItemKind, type: String, identifier: String) -> String {
        "\(downloadFolder)/\(type)/\(identifier).\(kind.fileExtension)"
    }

    /// `download/<capability>.pkpasses`: a bundle of passes.
    package static func bundleDownloadPath(capability: String) -> String { "\(downloadFolder)/\(capability).pkpasses" }

    /// `download/`: the add-to-Wallet links.
    package static let downloadFolder = "download"

    /// `.passforge/landing-pages.txt`: the landing pages of the last build (`LandingPageList`).
    package static let landingPageListPath = "\(stateFolder)/landing-pages.txt"

    /// `download/<capability>.html`, or `download/<capability>.<language>.html` for one language of the item: the
    /// landing page beside the download link `download/<capability>.pkpass|.order|.pkpasses`.
    package static func landingPagePath(capability: String, language: String? = nil) -> String {
        "\(downloadFolder)/\(capability)\(language.map { ".\($0)" } ?? "").html"
    }

    /// `download/<capability>.png`: the item's logo beside its landing page, for the Open Graph image.
    package static func landingImagePath(capability: String) -> String { "\(downloadFolder)/\(capability).png" }

    /// `download/<name>.svg|.png`: a badge file of the project (`name` is `badge-<language>` or
    /// `order-badge-<language>`), linked by every landing page and email snippet of that language.
    package static func badgePath(name: String, fileExtension: String) -> String {
        "\(downloadFolder)/\(name).\(fileExtension)"
    }

    /// The capability of a landing page, logo or download path (`download/<capability>.…`), or nil.
    package static func capability(ofDownloadPath path: String) -> Substring? {
        guard path.hasPrefix("\(downloadFolder)/") else { return nil }
        let name = fileName(of: path)
        return name.firstIndex(of: ".").map { name[..<$0] }
    }

    /// `v1/devices`: the device indices, written by `passforge serve` (and a build's refresh), never by a publish.
    package static let devicesFolder = "v1/devices"

    /// `v1/devices/<type>`: the indices of every device registered for one pass or order type, one file each.
    package static func deviceIndexFolder(type: String) -> String { "\(devicesFolder)/\(type)" }

    /// `v1/devices/<type>/<device>`: one device's index of one type, Apple's SerialNumbers object. One file
    /// per device and type, no folder of the device's own: one 4 KiB block on ext4 instead of three. The
    /// static configs map Apple's URL `/v1/devices/<device>/registrations/<type>` to it.
    package static func deviceIndexPath(device: String, type: String) -> String {
        "\(deviceIndexFolder(type: type))/\(device)"
    }

    /// `registrations`: the folder of a device in the layout before the per-type folders,
    /// `v1/devices/<device>/registrations/<type>`; read only to migrate it (`DeviceIndexFiles.migrateLegacyLayout`).
    package static let legacyRegistrationsFolderName = "registrations"

    /// The folder of `path`: what comes before its last slash ("" when it has none). Paths of the tree are
    /// plain relative paths (no `..`, no doubled slash: `isBuildOwned`), so no more is needed than the slash.
    package static func parentFolder(of path: String) -> Substring {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return path[..<slash]
    }

    /// The name of `path` in its folder: what comes after its last slash.
    package static func fileName(of path: String) -> Substring {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path[...] }
        return path[path.utf8.index(after: slash)...]
    }

    /// A folder that holds only the build's files: `v1/passes/<type>`, `v1/orders/<type>`, `by-token/<type>`,
    /// `download/<type>`, or `download`. A build moves a staged one into place whole when the output has none.
    package static func isBuildOwnedFolder(_ path: String) -> Bool {
        if path == downloadFolder { return true }
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), isPassType(bytes, (slash + 1)..<bytes.count)
            else { return false }
            switch slash {
            case 9: return matches(bytes, 0, "v1/passes/") || matches(bytes, 0, "v1/orders/")
            case 8: return matches(bytes, 0, "by-token/") || matches(bytes, 0, "download/")
            default: return false
            }
        }
    }

    /// `download/<capability>.pkpass` (`.order` for `kind` order), or with `bundle`, `download/<capability>.pkpasses`.
    package static func isCapabilityDownload(_ path: String, kind: WalletItemKind = .pass, bundle: Bool = false) -> Bool
    {
        var path = path
        return path.withUTF8 { bytes in
            let prefix = bytes.count > 9 && matches(bytes, 0, "download/")
            let suffix: StaticString = bundle ? ".pkpasses" : kind == .pass ? ".pkpass" : ".order"
            return prefix && isCapabilityName(bytes, 9..<bytes.count, suffix: suffix)
        }
    }

    /// `download/<type>/<serial>.pkpass` (`.order` for `kind` order) for this item.
    package static func isPublicDownloadPath(_ path: String, kind: WalletItemKind = .pass, type: String, serial: String)
        -> Bool
    {
        isPassPath(path, prefix: "download/", type: type, serial: serial) { bytes, rest in
            kind == .pass
                ? rest.count == 7 && matches(bytes, rest.lowerBound, ".pkpass")
                : rest.count == 6 && matches(bytes, rest.lowerBound, ".order")
        }
    }

    /// `by-token/<type>/<serial>.<token>` for this pass.
    package static func isTokenPath(_ path: String, type: String, serial: String) -> Bool {
        isPassPath(path, prefix: "by-token/", type: type, serial: serial) { bytes, rest in
            rest.count > 1 && bytes[rest.lowerBound] == UInt8(ascii: ".")
                && isToken(bytes, (rest.lowerBound + 1)..<rest.upperBound)
        }
    }

    package static func isPassType(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isPassType($0, 0..<$0.count) }
    }

    package static func isSerial(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isSerial($0, 0..<$0.count) }
    }

    /// `<type>/<serial>`, both matching their patterns.
    package static func isPassKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { bytes in
            guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else { return false }
            return isPassType(bytes, 0..<slash) && isSerial(bytes, (slash + 1)..<bytes.count)
        }
    }

    /// `key` is exactly `<type>/<serial>`.
    package static func isKey(_ key: String, type: String, serial: String) -> Bool {
        var (key, type, serial) = (key, type, serial)
        return key.withUTF8 { key in
            type.withUTF8 { type in
                serial.withUTF8 { serial in
                    key.count == type.count + 1 + serial.count && matches(key, 0, type)
                        && key[type.count] == UInt8(ascii: "/")
                        && matches(key, type.count + 1, serial)
                }
            }
        }
    }

    package static func isBuildOwned(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // The slashes: at most three in any build-owned path.
        var slashes = (-1, -1, -1)
        var count = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "/") {
            switch count {
            case 0: slashes.0 = index
            case 1: slashes.1 = index
            case 2: slashes.2 = index
            default: return false
            }
            count += 1
        }
        let end = bytes.count
        switch count {
        case 3:  // v1/passes/<type>/<serial>, v1/orders/<type>/<identifier>
            return slashes.0 == 2 && (matches(bytes, 0, "v1/passes/") || matches(bytes, 0, "v1/orders/"))
                && slashes.1 == 9
                && isPassType(bytes, 10..<slashes.2) && isSerial(bytes, (slashes.2 + 1)..<end)
        case 2 where slashes.0 == 8 && matches(bytes, 0, "by-token/"):  // by-token/<type>/<serial>.<token>
            guard isPassType(bytes, 9..<slashes.1),
                let dot = bytes[(slashes.1 + 1)..<end].lastIndex(of: UInt8(ascii: "."))
            else { return false }
            return isSerial(bytes, (slashes.1 + 1)..<dot) && isToken(bytes, (dot + 1)..<end)
        case 2 where slashes.0 == 8 && matches(bytes, 0, "download/"):  // download/<type>/<identifier>.pkpass|.order
            let suffix =
                end - slashes.1 > 8 && matches(bytes, end - 7, ".pkpass")
                ? 7 : end - slashes.1 > 7 && matches(bytes, end - 6, ".order") ? 6 : 0
            guard suffix > 0 else { return false }
            return isPassType(bytes, 9..<slashes.1) && isSerial(bytes, (slashes.1 + 1)..<(end - suffix))
        case 1 where slashes.0 == 8 && matches(bytes, 0, "download/"):  // download/<capability>.pkpass(es)|.order
            return isCapabilityName(bytes, 9..<end, suffix: ".pkpass")
                || isCapabilityName(bytes, 9..<end, suffix: ".pkpasses")
                || isCapabilityName(bytes, 9..<end, suffix: ".order") || isLandingName(bytes, 9..<end)
        default:
            return false
        }
    }

    /// `prefix` + `type` + "/" + `serial`, then what `rest` accepts (given the range after the serial).
    private static func isPassPath(
        _ path: String, prefix: StaticString, type: String, serial: String,
        rest: (UnsafeBufferPointer<UInt8>, Range<Int>) -> Bool
    ) -> Bool {
        var (path, type, serial) = (path, type, serial)
        return path.withUTF8 { bytes in
            type.withUTF8 { type in
                serial.withUTF8 { serial in
                    let start = prefix.utf8CodeUnitCount
                    let serialStart = start + type.count + 1
                    let end = serialStart + serial.count
                    guard bytes.count >= end, matches(bytes, 0, prefix), matches(bytes, start, type),
                        bytes[start + type.count] == UInt8(ascii: "/"), matches(bytes, serialStart, serial)
                    else { return false }
                    return rest(bytes, end..<bytes.count)
                }
            }
        }
    }

    package static func isPassType(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        IdentifierPatterns.isTypeIdentifier(bytes, range)
    }

    package static func isSerial(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        IdentifierPatterns.isIdentifier(bytes, range)
    }

    package static func isToken(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        IdentifierPatterns.isToken(bytes, range)
    }

    private static func isCapabilityName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, suffix: StaticString)
        -> Bool
    {
        let length = suffix.utf8CodeUnitCount
        guard range.count > length, range.count - length <= 100, matches(bytes, range.upperBound - length, suffix)
        else { return false }
        for index in range.lowerBound..<(range.upperBound - length) where !isBase64URL(bytes[index]) { return false }
        return true
    }

    /// A landing page's files: `<capability>.html`, `<capability>.<language>.html`, `<capability>.png` or
    /// `<capability>.svg` (a logo, or a badge named `badge-<language>`), each name `[A-Za-z0-9_-]{1,100}`.
    private static func isLandingName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        if isCapabilityName(bytes, range, suffix: ".html") || isCapabilityName(bytes, range, suffix: ".png")
            || isCapabilityName(bytes, range, suffix: ".svg")
        {
            return true
        }
        guard range.count > 5, matches(bytes, range.upperBound - 5, ".html"),
            let dot = bytes[range.lowerBound..<(range.upperBound - 5)].firstIndex(of: UInt8(ascii: "."))
        else { return false }
        let language = (dot + 1)..<(range.upperBound - 5)
        guard (1...35).contains(language.count), language.allSatisfy({ isBase64URL(bytes[$0]) }) else { return false }
        return (1...100).contains(dot - range.lowerBound)
            && (range.lowerBound..<dot).allSatisfy { isBase64URL(bytes[$0]) }
    }

    /// Whether `bytes` holds `text` at `offset`.
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int, _ text: StaticString) -> Bool {
        matches(bytes, offset, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int, _ text: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        guard offset >= 0, offset + text.count <= bytes.count else { return false }
        for index in 0..<text.count where bytes[offset + index] != text[index] { return false }
        return true
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool { IdentifierPatterns.isBase64URL(byte) }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool { IdentifierPatterns.isAlphanumeric(byte) }
}
