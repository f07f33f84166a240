#if canImport(Glibc)
    import Glibc
#endif

/// The keys of `state.json`: the one table that `BuildStateEncoding` writes and that `BuildStateDecoding` (the
/// build's cache) and `PublishedIndex` (the readers' view) read. A key is spelled here only.
///
/// Passes and orders alike keep the keys of the format's first version, `passTypeIdentifier` and
/// `serialNumber`, which an order fills with its `orderTypeIdentifier` and `orderIdentifier`: a tree published
/// by an earlier passforge still loads, and one published now loads in it. In Swift they are `typeIdentifier`
/// and `identifier` (`ItemKey`).
package protocol StateFieldTable: CaseIterable, Sendable where AllCases == [Self] {
    /// The key in the file.
    var name: StaticString { get }
    /// `allCases`, made once: the decoders look keys up in it for every field of every record, and a
    /// synthesized `allCases` makes a new array on each call.
    static var fields: [Self] { get }
}

extension StateFieldTable {
    /// Whether `key`, the bytes of a key read from the file, spells `name`.
    package func isNamed(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let name = self.name
        return key.count == name.utf8CodeUnitCount && memcmp(key.baseAddress!, name.utf8Start, key.count) == 0
    }

    /// The field whose name `key` spells, nil for a key this version does not know (skipped: a later version
    /// may add keys). `expected`, the field after the last one found, is compared first: the encoder writes the
    /// fields in the table's order, and comparing bytes with one name costs less than looking among all of them.
    package static func field(named key: UnsafeBufferPointer<UInt8>, expected: Int) -> (field: Self, index: Int)? {
        let fields = Self.fields
        if expected < fields.count, fields[expected].isNamed(key) { return (fields[expected], expected) }
        guard let index = fields.firstIndex(where: { $0.isNamed(key) }) else { return nil }
        return (fields[index], index)
    }

    /// `name` as the bytes of a JSON key followed by its colon: `"name":`.
    package func appendKey(to out: inout [UInt8], first: Bool = false) {
        if !first { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out += #"":"#.utf8
    }

    /// `name` as a String, for messages and the tests' Codable oracle.
    package var key: String { name.description }
}

/// The top level of `state.json`.
package enum StateField: StateFieldTable {
    case version, lastUpdateTag, builtAt, passes, contentFiles, removedPasses

    package static let fields = allCases

    package var name: StaticString {
        switch self {
        case .version: "version"
        case .lastUpdateTag: "lastUpdateTag"
        case .builtAt: "builtAt"
        // Every built item by `ItemKey.text`, orders too: the name is the first version's.
        case .passes: "passes"
        case .contentFiles: "contentFiles"
        // Every removed item by `ItemKey.text`.
        case .removedPasses: "removedPasses"
        }
    }
}

/// An item's record in `passes`, in the order the encoder writes them.
package enum ItemRecordField: StateFieldTable {
    case typeIdentifier, identifier, teamIdentifier, updateTag, etag, size, fingerprint, definitionHash, templateName,
        imagePaths, sourceFile, downloadPath, tokenHash, publicDownloadPath, tokenPath, offer, kind

    package static let fields = allCases

    package var name: StaticString {
        switch self {
        case .typeIdentifier: "passTypeIdentifier"
        case .identifier: "serialNumber"
        case .teamIdentifier: "teamIdentifier"
        case .updateTag: "updateTag"
        case .etag: "etag"
        case .size: "size"
        case .fingerprint: "fingerprint"
        case .definitionHash: "definitionHash"
        case .templateName: "templateName"
        case .imagePaths: "imagePaths"
        case .sourceFile: "sourceFile"
        case .downloadPath: "downloadPath"
        case .tokenHash: "tokenHash"
        case .publicDownloadPath: "publicDownloadPath"
        case .tokenPath: "tokenPath"
        case .offer: "offer"
        // Absent for a pass (states written before orders have none).
        case .kind: "kind"
        }
    }

    /// Read by the build only, to tell whether an item must be made again: `PublishedIndex` skips it.
    package var isBuildOnly: Bool {
        switch self {
        case .fingerprint, .definitionHash, .imagePaths, .sourceFile: true
        default: false
        }
    }
}

/// A removed item's record in `removedPasses`.
package enum RemovedRecordField: StateFieldTable {
    case typeIdentifier, identifier, tokenHash, removedTag, files, kind

    package static let fields = allCases

    package var name: StaticString {
        switch self {
        case .typeIdentifier: "passTypeIdentifier"
        case .identifier: "serialNumber"
        case .tokenHash: "tokenHash"
        case .removedTag: "removedTag"
        // Absent in states written before removed items kept their names.
        case .files: "files"
        case .kind: "kind"
        }
    }
}

/// A content file's record in `contentFiles` (the build's alone).
package enum ContentFileField: StateFieldTable {
    case hash, passes, stamp, entries

    package static let fields = allCases

    package var name: StaticString {
        switch self {
        case .hash: "hash"
        // The keys (`ItemKey.text`) of the items the file defines.
        case .passes: "passes"
        // The stamp was called identity when the state format was fixed; the file keeps that name.
        case .stamp: "identity"
        case .entries: "entries"
        }
    }
}
