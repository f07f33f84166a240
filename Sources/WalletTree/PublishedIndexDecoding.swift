import PassModel

/// Reads a `PublishedIndex` straight from the bytes of `state.json`, on every core, as `BuildStateDecoding`
/// reads the build's cache and with the same scanner and table of keys (`StateField`, `ItemRecordField`,
/// `RemovedRecordField`): the content files are skipped whole, and in each record the fields only the build
/// reads are skipped, never made into values.
enum PublishedIndexDecoding {
    typealias Failure = BuildStateDecoding.Failure

    static func decode(buffer: UnsafeBufferPointer<UInt8>, jobs: Int) throws(Failure) -> PublishedIndex {
        var version: Int?
        var lastUpdateTag: Int64 = 0
        var builtAt = ""
        var itemMembers: [(key: String, range: Range<Int>)] = []
        var removedMembers: [(key: String, range: Range<Int>)] = []
        var scanner = JSONScanner(buffer)
        var expected = 0
        try scanner.objectWithRawKeys { scanner, key throws(Failure) in
            guard let (field, index) = StateField.field(named: key, expected: expected) else {
                return try scanner.skipValue()
            }
            expected = index + 1
            switch field {
            case .version: version = try scanner.integer()
            case .lastUpdateTag: lastUpdateTag = Int64(try scanner.integer())
            case .builtAt: builtAt = try scanner.string()
            case .passes: itemMembers = try scanner.members()
            case .removedPasses: removedMembers = try scanner.members()
            case .contentFiles: try scanner.skipValue()
            }
        }
        try scanner.finish()
        guard let version else { throw Failure(description: "no version") }
        guard version == BuildState.currentVersion else {
            throw Failure(description: "state version \(version)", version: version)
        }
        let bytes = StateBytes(buffer: buffer)
        let chunks = try BuildStateDecoding.decodeMembers(itemMembers, in: bytes, jobs: jobs) {
            scanner, shared throws(Failure) in
            try PublishedItem(scanner: &scanner, sharing: &shared)
        }
        var items: [ItemKey: PublishedItem] = [:]
        items.reserveCapacity(itemMembers.count)
        for chunk in chunks {
            for item in chunk { items[item.key] = item }
        }
        var removed: [ItemKey: RemovedItem] = [:]
        for member in removedMembers {
            var scanner = JSONScanner(buffer, range: member.range)
            let record = try RemovedItem(scanner: &scanner, member: member.key)
            removed[record.key] = record
        }
        return PublishedIndex(lastUpdateTag: lastUpdateTag, builtAt: builtAt, items: items, removedItems: removed)
    }
}

extension PublishedItem {
    fileprivate convenience init(scanner: inout JSONScanner, sharing shared: inout SharedStrings)
        throws(BuildStateDecoding.Failure)
    {
        var type: String?
        var identifier: String?
        var team: String?
        var updateTag: Int?
        var etag: PackedDigest?
        var size: Int?
        var tokenHash: PackedDigest?
        var templateName: String?
        var downloadPath: String?
        var publicDownloadPath: String?
        var tokenPath: String?
        var offer: String?
        var kind = WalletItemKind.pass
        var expected = 0
        try scanner.objectWithRawKeys { scanner, key throws(BuildStateDecoding.Failure) in
            guard let (field, index) = ItemRecordField.field(named: key, expected: expected) else {
                return try scanner.skipValue()
            }
            expected = index + 1
            switch field {
            case .typeIdentifier: type = try shared.string(0, &scanner)
            case .identifier: identifier = try scanner.string()
            case .teamIdentifier: team = try shared.string(1, &scanner)
            case .updateTag: updateTag = try scanner.integer()
            case .etag: etag = try scanner.digest()
            case .size: size = try scanner.integer()
            case .templateName: templateName = try shared.string(2, &scanner)
            case .downloadPath: downloadPath = try scanner.string()
            case .tokenHash: tokenHash = try scanner.optionalDigest()
            case .publicDownloadPath: publicDownloadPath = try scanner.optionalString()
            case .tokenPath: tokenPath = try scanner.optionalString()
            case .offer: offer = try scanner.optionalString()
            case .kind: kind = try scanner.itemKind()
            case .fingerprint, .definitionHash, .imagePaths, .sourceFile: try scanner.skipValue()
            }
        }
        func required<T>(_ value: T?, _ field: ItemRecordField) throws(BuildStateDecoding.Failure) -> T {
            guard let value else { throw BuildStateDecoding.Failure(description: "an item has no \(field.key)") }
            return value
        }
        self.init(
            key: ItemKey(
                kind: kind, typeIdentifier: try required(type, .typeIdentifier),
                identifier: try required(identifier, .identifier)),
            teamIdentifier: try required(team, .teamIdentifier), updateTag: Int64(try required(updateTag, .updateTag)),
            etag: try required(etag, .etag), size: try required(size, .size), tokenHash: tokenHash,
            templateName: try required(templateName, .templateName),
            downloadPath: try required(downloadPath, .downloadPath),
            publicDownloadPath: publicDownloadPath, tokenPath: tokenPath, offer: offer)
    }
}

extension RemovedItem {
    /// The removed item's record; `member`, its key in the file, names it in a message.
    fileprivate init(scanner: inout JSONScanner, member: String) throws(BuildStateDecoding.Failure) {
        let fields = try RemovedRecordFields(scanner: &scanner, member: member)
        self.init(key: fields.key, tokenHash: fields.tokenHash, removedTag: fields.removedTag, files: fields.files)
    }
}

/// The fields of a removed item's record, as both decoders read them.
struct RemovedRecordFields {
    var key: ItemKey
    var tokenHash: String
    var removedTag: Int64
    var files: [String]

    init(scanner: inout JSONScanner, member: String) throws(BuildStateDecoding.Failure) {
        var type: String?
        var identifier: String?
        var tokenHash: String?
        var tag: Int?
        var files: [String] = []
        var kind = WalletItemKind.pass
        var expected = 0
        try scanner.objectWithRawKeys { scanner, key throws(BuildStateDecoding.Failure) in
            guard let (field, index) = RemovedRecordField.field(named: key, expected: expected) else {
                return try scanner.skipValue()
            }
            expected = index + 1
            switch field {
            case .typeIdentifier: type = try scanner.string()
            case .identifier: identifier = try scanner.string()
            case .tokenHash: tokenHash = try scanner.string()
            case .removedTag: tag = try scanner.integer()
            case .files: files = try scanner.stringArray()
            case .kind: kind = try scanner.itemKind()
            }
        }
        guard let type, let identifier, let tokenHash, let tag else {
            throw BuildStateDecoding.Failure(description: "removed item \(member) is incomplete")
        }
        (key, self.tokenHash, removedTag, self.files) = (
            ItemKey(kind: kind, typeIdentifier: type, identifier: identifier), tokenHash,
            Int64(tag), files
        )
    }
}
