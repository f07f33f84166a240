import Foundation
import PassModel
import WalletTree

// The oracle: Foundation's JSONEncoder and JSONDecoder through Codable conformances written apart from the
// fast encoder and decoders (`BuildStateEncoding`, `BuildStateDecoding`, `PublishedIndex`), with the keys of
// state.json spelled here again rather than taken from `StateField`'s table, so that a wrong name in the
// table fails too. Only the tests conform the state to Codable: the program reads and writes it by hand.

extension BuildState: Codable {
    enum CodingKeys: String, CodingKey {
        case version, lastUpdateTag, builtAt, passes, contentFiles, removedPasses
    }

    /// States written before items were remembered after removal have no `removedPasses`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        version = try container.decode(Int.self, forKey: .version)
        lastUpdateTag = try container.decode(Int64.self, forKey: .lastUpdateTag)
        builtAt = try container.decode(String.self, forKey: .builtAt)
        passes = try container.decode([String: ItemRecord].self, forKey: .passes)
        contentFiles = try container.decode([String: ContentFileRecord].self, forKey: .contentFiles)
        removedPasses = try container.decodeIfPresent([String: RemovedItemRecord].self, forKey: .removedPasses) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(lastUpdateTag, forKey: .lastUpdateTag)
        try container.encode(builtAt, forKey: .builtAt)
        try container.encode(passes, forKey: .passes)
        try container.encode(contentFiles, forKey: .contentFiles)
        try container.encode(removedPasses, forKey: .removedPasses)
    }
}

extension BuildState.ItemRecord: Codable {
    /// An order's type identifier and identifier are kept under the first version's names.
    enum CodingKeys: String, CodingKey {
        case typeIdentifier = "passTypeIdentifier"
        case identifier = "serialNumber"
        case teamIdentifier, updateTag, etag, size, tokenHash,
            fingerprint, definitionHash, templateName, imagePaths, sourceFile, downloadPath, publicDownloadPath,
            tokenPath, offer, kind
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            typeIdentifier: try container.decode(String.self, forKey: .typeIdentifier),
            identifier: try container.decode(String.self, forKey: .identifier),
            teamIdentifier: try container.decode(String.self, forKey: .teamIdentifier),
            updateTag: try container.decode(Int64.self, forKey: .updateTag),
            etag: try container.decode(String.self, forKey: .etag),
            size: try container.decode(Int.self, forKey: .size),
            tokenHash: try container.decodeIfPresent(String.self, forKey: .tokenHash),
            fingerprint: try container.decode(String.self, forKey: .fingerprint),
            definitionHash: try container.decode(String.self, forKey: .definitionHash),
            templateName: try container.decode(String.self, forKey: .templateName),
            imagePaths: try container.decode([String].self, forKey: .imagePaths),
            sourceFile: try container.decode(String.self, forKey: .sourceFile),
            downloadPath: try container.decode(String.self, forKey: .downloadPath),
            publicDownloadPath: try container.decodeIfPresent(String.self, forKey: .publicDownloadPath),
            tokenPath: try container.decodeIfPresent(String.self, forKey: .tokenPath),
            offer: try container.decodeIfPresent(String.self, forKey: .offer),
            kind: try container.decodeIfPresent(WalletItemKind.self, forKey: .kind) ?? .pass)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeIdentifier, forKey: .typeIdentifier)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(teamIdentifier, forKey: .teamIdentifier)
        try container.encode(updateTag, forKey: .updateTag)
        try container.encode(etag, forKey: .etag)
        try container.encode(size, forKey: .size)
        try container.encodeIfPresent(tokenHash, forKey: .tokenHash)
        try container.encode(fingerprint, forKey: .fingerprint)
        try container.encode(definitionHash, forKey: .definitionHash)
        try container.encode(templateName, forKey: .templateName)
        try container.encode(imagePaths, forKey: .imagePaths)
        try container.encode(sourceFile, forKey: .sourceFile)
        try container.encode(downloadPath, forKey: .downloadPath)
        try container.encodeIfPresent(publicDownloadPath, forKey: .publicDownloadPath)
        try container.encodeIfPresent(tokenPath, forKey: .tokenPath)
        try container.encodeIfPresent(offer, forKey: .offer)
        if kind != .pass { try container.encode(kind, forKey: .kind) }
    }
}

extension BuildState.ContentFileRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case hash, passes, entries
        case stamp = "identity"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hash: try container.decode(String.self, forKey: .hash),
            passes: try container.decode([String].self, forKey: .passes),
            stamp: try container.decodeIfPresent(String.self, forKey: .stamp),
            entries: try container.decodeIfPresent(String.self, forKey: .entries))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hash, forKey: .hash)
        try container.encode(passes, forKey: .passes)
        try container.encodeIfPresent(stamp, forKey: .stamp)
        try container.encodeIfPresent(entries, forKey: .entries)
    }
}

extension BuildState.RemovedItemRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case typeIdentifier = "passTypeIdentifier"
        case identifier = "serialNumber"
        case tokenHash, removedTag, files, kind
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            typeIdentifier: try container.decode(String.self, forKey: .typeIdentifier),
            identifier: try container.decode(String.self, forKey: .identifier),
            tokenHash: try container.decode(String.self, forKey: .tokenHash),
            removedTag: try container.decode(Int64.self, forKey: .removedTag),
            files: try container.decodeIfPresent([String].self, forKey: .files) ?? [],
            kind: try container.decodeIfPresent(WalletItemKind.self, forKey: .kind) ?? .pass)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeIdentifier, forKey: .typeIdentifier)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(tokenHash, forKey: .tokenHash)
        try container.encode(removedTag, forKey: .removedTag)
        try container.encode(files, forKey: .files)
        if kind != .pass { try container.encode(kind, forKey: .kind) }
    }
}
