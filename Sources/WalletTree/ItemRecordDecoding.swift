import PassModel

/// The fields of one item's record in `state.json`, read by the one decoder that both readers share: the build's
/// cache (`BuildState.ItemRecord`, every field) and the readers' index (`PublishedItem`, where the fields that
/// `ItemRecordField.isBuildOnly` names are skipped, never made into values). Keys are looked up in
/// `ItemRecordField`'s table, compared as bytes: a String for each of 17 keys of 100,000 records costs more than
/// the values.
struct ItemRecordFields {
    typealias Failure = BuildStateDecoding.Failure

    var typeIdentifier: String?
    var identifier: String?
    var teamIdentifier: String?
    var updateTag: Int?
    var etag: PackedDigest?
    var size: Int?
    var tokenHash: PackedDigest?
    var fingerprint: PackedDigest?
    var definitionHash: PackedDigest?
    var templateName: String?
    var imagePaths: [String] = []
    var sourceFile: String?
    var downloadPath: String?
    var publicDownloadPath: String?
    var tokenPath: String?
    var offer: String?
    /// Absent for a pass (states written before orders have none).
    var kind = WalletItemKind.pass

    /// Reads a record; with `buildOnly` false, the build-only fields are skipped. Values repeated from one
    /// record to the next (type, team, template, source file) share one string through `shared`.
    init(scanner: inout JSONScanner, sharing shared: inout SharedStrings, buildOnly: Bool) throws(Failure) {
        var expected = 0
        try scanner.objectWithRawKeys { scanner, key throws(Failure) in
            guard let (field, index) = ItemRecordField.field(named: key, expected: expected) else {
                return try scanner.skipValue()
            }
            expected = index + 1
            if buildOnly || !field.isBuildOnly {
                try read(field, from: &scanner, sharing: &shared)
            } else {
                try scanner.skipValue()
            }
        }
    }

    private mutating func read(
        _ field: ItemRecordField, from scanner: inout JSONScanner, sharing shared: inout SharedStrings
    )
        throws(Failure)
    {
        switch field {
        case .typeIdentifier: typeIdentifier = try shared.string(0, &scanner)
        case .identifier: identifier = try scanner.string()
        case .teamIdentifier: teamIdentifier = try shared.string(1, &scanner)
        case .updateTag: updateTag = try scanner.integer()
        case .etag: etag = try scanner.digest()
        case .size: size = try scanner.integer()
        case .fingerprint: fingerprint = try scanner.digest()
        case .definitionHash: definitionHash = try scanner.digest()
        case .templateName: templateName = try shared.string(2, &scanner)
        case .imagePaths: imagePaths = try scanner.stringArray()
        case .sourceFile: sourceFile = try shared.string(3, &scanner)
        case .downloadPath: downloadPath = try scanner.string()
        case .tokenHash: tokenHash = try scanner.optionalDigest()
        case .publicDownloadPath: publicDownloadPath = try scanner.optionalString()
        case .tokenPath: tokenPath = try scanner.optionalString()
        case .offer: offer = try scanner.optionalString()
        case .kind: kind = try scanner.itemKind()
        }
    }

    /// `value`, which the record must have.
    func required<T>(_ value: T?, _ field: ItemRecordField) throws(Failure) -> T {
        guard let value else { throw Failure(description: "an item has no \(field.key)") }
        return value
    }

    /// The item's key, from its type and identifier.
    func key() throws(Failure) -> ItemKey {
        ItemKey(
            kind: kind, typeIdentifier: try required(typeIdentifier, .typeIdentifier),
            identifier: try required(identifier, .identifier))
    }
}

extension BuildState.ItemRecord {
    /// The build's record: every field.
    init(scanner: inout JSONScanner, sharing shared: inout SharedStrings) throws(BuildStateDecoding.Failure) {
        let fields = try ItemRecordFields(scanner: &scanner, sharing: &shared, buildOnly: true)
        self.init(
            typeIdentifier: try fields.required(fields.typeIdentifier, .typeIdentifier),
            identifier: try fields.required(fields.identifier, .identifier),
            teamIdentifier: try fields.required(fields.teamIdentifier, .teamIdentifier),
            updateTag: Int64(try fields.required(fields.updateTag, .updateTag)),
            packedETag: try fields.required(fields.etag, .etag), size: try fields.required(fields.size, .size),
            tokenHash: fields.tokenHash, fingerprint: try fields.required(fields.fingerprint, .fingerprint),
            definitionHash: try fields.required(fields.definitionHash, .definitionHash),
            templateName: try fields.required(fields.templateName, .templateName), imagePaths: fields.imagePaths,
            sourceFile: try fields.required(fields.sourceFile, .sourceFile),
            downloadPath: try fields.required(fields.downloadPath, .downloadPath),
            publicDownloadPath: fields.publicDownloadPath, tokenPath: fields.tokenPath, offer: fields.offer,
            kind: fields.kind)
    }
}

extension PublishedItem {
    /// The readers' record: the build-only fields skipped.
    convenience init(scanner: inout JSONScanner, sharing shared: inout SharedStrings)
        throws(BuildStateDecoding.Failure)
    {
        let fields = try ItemRecordFields(scanner: &scanner, sharing: &shared, buildOnly: false)
        self.init(
            key: try fields.key(), teamIdentifier: try fields.required(fields.teamIdentifier, .teamIdentifier),
            updateTag: Int64(try fields.required(fields.updateTag, .updateTag)),
            etag: try fields.required(fields.etag, .etag), size: try fields.required(fields.size, .size),
            tokenHash: fields.tokenHash, templateName: try fields.required(fields.templateName, .templateName),
            downloadPath: try fields.required(fields.downloadPath, .downloadPath),
            publicDownloadPath: fields.publicDownloadPath, tokenPath: fields.tokenPath, offer: fields.offer)
    }
}
