import PassModel

/// Reads a `PublishedIndex` straight from the bytes of `state.json`, on every core, as `BuildStateDecoding`
/// reads the build's cache and with the same scanner, table of keys (`StateField`, `ItemRecordField`,
/// `RemovedRecordField`) and record decoder (`ItemRecordFields`): the content files are skipped whole, and in
/// each record the fields only the build reads are skipped, never made into values.
enum PublishedIndexDecoding {
    typealias Failure = BuildStateDecoding.Failure

    static func decode(buffer: UnsafeBufferPointer<UInt8>, jobs: Int) throws(Failure) -> PublishedIndex {
        let outline = try StateOutline(buffer)
        try outline.checkVersion()
        let chunks = try BuildStateDecoding.decodeMembers(outline.items, in: StateBytes(buffer: buffer), jobs: jobs) {
            scanner, shared throws(Failure) in
            try PublishedItem(scanner: &scanner, sharing: &shared)
        }
        var items: [ItemKey: PublishedItem] = [:]
        items.reserveCapacity(outline.items.count)
        for chunk in chunks {
            for item in chunk { items[item.key] = item }
        }
        return PublishedIndex(
            lastUpdateTag: outline.lastUpdateTag, builtAt: outline.builtAt, items: items,
            removedItems: try removedItems(outline.removed, in: buffer))
    }

    /// The records of the `removedPasses` members, by key.
    static func removedItems(_ members: [(key: String, range: Range<Int>)], in buffer: UnsafeBufferPointer<UInt8>)
        throws(Failure) -> [ItemKey: RemovedItem]
    {
        var removed: [ItemKey: RemovedItem] = [:]
        for member in members {
            var scanner = JSONScanner(buffer, range: member.range)
            let record = try RemovedItem(scanner: &scanner, member: member.key)
            removed[record.key] = record
        }
        return removed
    }
}

/// The top level of a `state.json`: its version, tag and build time, and where each item's and each removed
/// item's record is (by key, in file order). The content files are skipped whole.
struct StateOutline {
    typealias Failure = BuildStateDecoding.Failure

    var version: Int?
    var lastUpdateTag: Int64 = 0
    var builtAt = ""
    var items: [(key: String, range: Range<Int>)] = []
    var removed: [(key: String, range: Range<Int>)] = []

    init(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
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
            case .passes: items = try scanner.members()
            case .removedPasses: removed = try scanner.members()
            case .contentFiles: try scanner.skipValue()
            }
        }
        try scanner.finish()
    }

    /// Throws unless the state is of the version this passforge reads.
    func checkVersion() throws(Failure) {
        guard let version else { throw Failure(description: "no version") }
        guard version == BuildState.currentVersion else {
            throw Failure(description: "state version \(version)", version: version)
        }
    }

    /// The outline of the local state at `path`; its failures are `PublishedIndex.unreadable`'s.
    static func local(_ buffer: UnsafeBufferPointer<UInt8>, path: String) throws(BuildError) -> StateOutline {
        do {
            let outline = try StateOutline(buffer)
            try outline.checkVersion()
            return outline
        } catch {
            throw PublishedIndex.unreadable(error, path: path)
        }
    }

    /// The outline of a destination's state, its version and tag checked (`BuildState.decodePublished`'s rules).
    static func published(_ buffer: UnsafeBufferPointer<UInt8>, greatestTag: Int64) throws(BuildError) -> StateOutline {
        let outline: StateOutline
        do {
            outline = try StateOutline(buffer)
        } catch {
            throw BuildError(.refused, "state.json is not a build state (\(error))")
        }
        guard outline.version == BuildState.currentVersion else {
            throw BuildError(
                .refused,
                "state.json was written by another passforge version (state version \(outline.version ?? 0))")
        }
        guard outline.lastUpdateTag >= 0, outline.lastUpdateTag <= greatestTag else {
            throw BuildError(
                .refused,
                "lastUpdateTag is \(outline.lastUpdateTag), not an update tag of this build's time (0 to \(greatestTag), milliseconds since 1970)"
            )
        }
        try BuildState.checkText(outline.builtAt, "builtAt")
        return outline
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
