import AtomicFiles
import Foundation
package import PassModel

/// What the last build made, kept in `output/.passforge/state.json`.
///
/// It is committed last, so it always describes files that are complete on
/// disk. `passforge serve` reads tokens, ETags and update tags from it.
package struct BuildState: Codable, Sendable, Equatable {
    package static let currentVersion = 1

    /// One pass as the last build made it.
    ///
    /// Its fields are kept in one object, shared by copies until one is changed: a dictionary of 100,000
    /// records then holds a reference each (a record's fields inline take 232 bytes, in a dictionary
    /// about twice that with its empty slots), a copy is one retain, and the hashes are kept as bytes
    /// (see `PackedDigest`).
    package struct ItemRecord: Codable, Sendable, Equatable {
        private var fields: Fields

        package init(passTypeIdentifier: String, serialNumber: String, teamIdentifier: String, updateTag: Int64, etag: String, size: Int,
                     tokenHash: String? = nil, fingerprint: String, definitionHash: String, templateName: String, imagePaths: [String],
                     sourceFile: String, downloadPath: String, publicDownloadPath: String? = nil, tokenPath: String? = nil,
                     offer: String? = nil, kind: WalletItemKind = .pass) {
            fields = Fields(
                passTypeIdentifier: passTypeIdentifier, serialNumber: serialNumber, teamIdentifier: teamIdentifier, updateTag: updateTag,
                etag: PackedDigest(etag), size: size, tokenHash: tokenHash.map(PackedDigest.init), fingerprint: PackedDigest(fingerprint),
                definitionHash: PackedDigest(definitionHash), templateName: templateName, imagePaths: imagePaths, sourceFile: sourceFile,
                downloadPath: downloadPath, publicDownloadPath: publicDownloadPath, tokenPath: tokenPath, offer: offer, kind: kind)
        }

        package init(fields: Fields) { self.fields = fields }

        package var passTypeIdentifier: String {
            get { fields.passTypeIdentifier }
            set { unique().passTypeIdentifier = newValue }
        }
        package var serialNumber: String {
            get { fields.serialNumber }
            set { unique().serialNumber = newValue }
        }
        package var teamIdentifier: String {
            get { fields.teamIdentifier }
            set { unique().teamIdentifier = newValue }
        }
        /// Update tag: milliseconds since 1970 of the build that last changed the pass.
        package var updateTag: Int64 {
            get { fields.updateTag }
            set { unique().updateTag = newValue }
        }
        /// Strong ETag of the .pkpass bytes, with its quotes: `"3f2a…"`.
        package var etag: String {
            get { fields.etag.text }
            set { unique().etag = PackedDigest(newValue) }
        }
        package var size: Int {
            get { fields.size }
            set { unique().size = newValue }
        }
        /// Hex SHA-256 of the authentication token; the token itself is never stored.
        package var tokenHash: String? {
            get { fields.tokenHash?.text }
            set { unique().tokenHash = newValue.map(PackedDigest.init) }
        }
        /// Hash of every input of the pass: content entry, template, images, config, identity.
        package var fingerprint: String {
            get { fields.fingerprint.text }
            set { unique().fingerprint = PackedDigest(newValue) }
        }
        /// Hash of the content entry alone, to re-check a cached file without parsing it.
        package var definitionHash: String {
            get { fields.definitionHash.text }
            set { unique().definitionHash = PackedDigest(newValue) }
        }
        package var templateName: String {
            get { fields.templateName }
            set { unique().templateName = newValue }
        }
        /// Per-pass image files (paths), re-hashed on every build.
        package var imagePaths: [String] {
            get { fields.imagePaths }
            set { unique().imagePaths = newValue }
        }
        package var sourceFile: String {
            get { fields.sourceFile }
            set { unique().sourceFile = newValue }
        }
        /// `download/<capability>.pkpass`, relative to the output folder.
        package var downloadPath: String {
            get { fields.downloadPath }
            set { unique().downloadPath = newValue }
        }
        package var publicDownloadPath: String? {
            get { fields.publicDownloadPath }
            set { unique().publicDownloadPath = newValue }
        }
        /// `by-token/<type>/<serial>.<authenticationToken>`: the same bytes under a
        /// name a static host finds from the `Authorization: ApplePass` header;
        /// nil for a pass without a web service (or built before such names).
        package var tokenPath: String? {
            get { fields.tokenPath }
            set { unique().tokenPath = newValue }
        }
        /// The DeviceCheck offer whose pool the pass is in (`offer:` in content), if any.
        package var offer: String? {
            get { fields.offer }
            set { unique().offer = newValue }
        }
        /// A pass or an order. `passTypeIdentifier` and `serialNumber` then hold an order's
        /// `orderTypeIdentifier` and `orderIdentifier`: both kinds share one namespace of type
        /// identifiers, as they share `by-token/` and `v1/devices/…/registrations/` (the build
        /// refuses a type identifier used for both).
        package var kind: WalletItemKind {
            get { fields.kind }
            set { unique().kind = newValue }
        }

        /// The hashes as they are kept, to compare without spelling them out.
        package var packedFingerprint: PackedDigest { fields.fingerprint }
        package var packedDefinitionHash: PackedDigest { fields.definitionHash }
        package var hasTokenHash: Bool { fields.tokenHash != nil }

        package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }
        package var path: String { TreeLayout.itemPath(kind: kind, type: passTypeIdentifier, identifier: serialNumber) }

        /// Every name of the pass's bytes in the output tree.
        package var files: [String] {
            var files: [String] = []
            files.reserveCapacity(4)
            forEachFile { name, _ in files.append(name) }
            return files
        }

        /// Each of `files` with its place among the names an item can have (0 its path, 1 its download
        /// link, 2 its public download link, 3 its token-keyed name), without making the array.
        package func forEachFile(_ body: (_ name: String, _ place: Int) -> Void) {
            body(path, 0)
            body(downloadPath, 1)
            if let publicDownloadPath { body(publicDownloadPath, 2) }
            if let tokenPath { body(tokenPath, 3) }
        }

        /// The token-keyed name of a pass: what a static host serves for
        /// `GET v1/passes/<type>/<serial>` with `Authorization: ApplePass <token>`.
        package static func tokenPath(passTypeIdentifier: String, serialNumber: String, token: String) -> String {
            TreeLayout.tokenPath(type: passTypeIdentifier, identifier: serialNumber, token: token)
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.fields === rhs.fields || lhs.fields.hasSameValues(as: rhs.fields)
        }

        /// The fields, copied first when another record shares them.
        private mutating func unique() -> Fields {
            if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
            return fields
        }

        package enum CodingKeys: String, CodingKey {
            case passTypeIdentifier, serialNumber, teamIdentifier, updateTag, etag, size, tokenHash, fingerprint, definitionHash,
                 templateName, imagePaths, sourceFile, downloadPath, publicDownloadPath, tokenPath, offer, kind
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                passTypeIdentifier: try container.decode(String.self, forKey: .passTypeIdentifier),
                serialNumber: try container.decode(String.self, forKey: .serialNumber),
                teamIdentifier: try container.decode(String.self, forKey: .teamIdentifier),
                updateTag: try container.decode(Int64.self, forKey: .updateTag), etag: try container.decode(String.self, forKey: .etag),
                size: try container.decode(Int.self, forKey: .size), tokenHash: try container.decodeIfPresent(String.self, forKey: .tokenHash),
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

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(passTypeIdentifier, forKey: .passTypeIdentifier)
            try container.encode(serialNumber, forKey: .serialNumber)
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

        /// The fields of a record. Changed only through a record that holds the only reference
        /// (see `unique`), so records on different threads never change one object.
        package final class Fields: @unchecked Sendable {
            package var passTypeIdentifier: String
            package var serialNumber: String
            package var teamIdentifier: String
            package var updateTag: Int64
            package var etag: PackedDigest
            package var size: Int
            package var tokenHash: PackedDigest?
            package var fingerprint: PackedDigest
            package var definitionHash: PackedDigest
            package var templateName: String
            package var imagePaths: [String]
            package var sourceFile: String
            package var downloadPath: String
            package var publicDownloadPath: String?
            package var tokenPath: String?
            package var offer: String?
            package var kind: WalletItemKind

            package init(passTypeIdentifier: String, serialNumber: String, teamIdentifier: String, updateTag: Int64, etag: PackedDigest, size: Int,
                 tokenHash: PackedDigest?, fingerprint: PackedDigest, definitionHash: PackedDigest, templateName: String,
                 imagePaths: [String], sourceFile: String, downloadPath: String, publicDownloadPath: String?, tokenPath: String?,
                 offer: String?, kind: WalletItemKind) {
                self.passTypeIdentifier = passTypeIdentifier
                self.serialNumber = serialNumber
                self.teamIdentifier = teamIdentifier
                self.updateTag = updateTag
                self.etag = etag
                self.size = size
                self.tokenHash = tokenHash
                self.fingerprint = fingerprint
                self.definitionHash = definitionHash
                self.templateName = templateName
                self.imagePaths = imagePaths
                self.sourceFile = sourceFile
                self.downloadPath = downloadPath
                self.publicDownloadPath = publicDownloadPath
                self.tokenPath = tokenPath
                self.offer = offer
                self.kind = kind
            }

            package func copy() -> Fields {
                Fields(passTypeIdentifier: passTypeIdentifier, serialNumber: serialNumber, teamIdentifier: teamIdentifier, updateTag: updateTag,
                       etag: etag, size: size, tokenHash: tokenHash, fingerprint: fingerprint, definitionHash: definitionHash,
                       templateName: templateName, imagePaths: imagePaths, sourceFile: sourceFile, downloadPath: downloadPath,
                       publicDownloadPath: publicDownloadPath, tokenPath: tokenPath, offer: offer, kind: kind)
            }

            package func hasSameValues(as other: Fields) -> Bool {
                passTypeIdentifier == other.passTypeIdentifier && serialNumber == other.serialNumber
                    && teamIdentifier == other.teamIdentifier && updateTag == other.updateTag && etag == other.etag && size == other.size
                    && tokenHash == other.tokenHash && fingerprint == other.fingerprint && definitionHash == other.definitionHash
                    && templateName == other.templateName && imagePaths == other.imagePaths && sourceFile == other.sourceFile
                    && downloadPath == other.downloadPath && publicDownloadPath == other.publicDownloadPath && tokenPath == other.tokenPath
                    && offer == other.offer && kind == other.kind
            }
        }
    }

    /// A content file as the last build read it. Its fields are kept in one object, as a pass record's are.
    package struct ContentFileRecord: Codable, Sendable, Equatable {
        private var fields: Fields

        package init(hash: String, passes: [String], stamp: String? = nil, entries: String? = nil) {
            fields = Fields(hash: PackedDigest(hash), passes: passes, stamp: stamp, entries: entries)
        }

        package init(hash: PackedDigest, passes: [String], stamp: String?, entries: String?) {
            fields = Fields(hash: hash, passes: passes, stamp: stamp, entries: entries)
        }

        /// SHA-256 of the file's bytes.
        package var hash: String {
            get { fields.hash.text }
            set { unique().hash = PackedDigest(newValue) }
        }
        /// Keys (`type/serial`) of the passes the file defines, in order.
        package var passes: [String] {
            get { fields.passes }
            set { unique().passes = newValue }
        }
        /// The file's size, times and inode when it was hashed (see `FileStamp`):
        /// while they stay the same, the next build need not read it again.
        package var stamp: String? {
            get { fields.stamp }
            set { unique().stamp = newValue }
        }
        /// For a YAML file with `passes:`, the hash of its header and of each
        /// entry (see `PassListEntries`): the next build parses only the entries that changed.
        package var entries: String? {
            get { fields.entries }
            set { unique().entries = newValue }
        }

        /// The hash as it is kept, to compare without spelling it out.
        package var packedHash: PackedDigest { fields.hash }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.fields === rhs.fields
                || (lhs.fields.hash == rhs.fields.hash && lhs.fields.passes == rhs.fields.passes
                    && lhs.fields.stamp == rhs.fields.stamp && lhs.fields.entries == rhs.fields.entries)
        }

        private mutating func unique() -> Fields {
            if !isKnownUniquelyReferenced(&fields) {
                fields = Fields(hash: fields.hash, passes: fields.passes, stamp: fields.stamp, entries: fields.entries)
            }
            return fields
        }

        package enum CodingKeys: String, CodingKey {
            case hash, passes, entries
            // The stamp was called identity when the state format was fixed; the file keeps that name.
            case stamp = "identity"
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(hash: try container.decode(String.self, forKey: .hash), passes: try container.decode([String].self, forKey: .passes),
                      stamp: try container.decodeIfPresent(String.self, forKey: .stamp),
                      entries: try container.decodeIfPresent(String.self, forKey: .entries))
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(hash, forKey: .hash)
            try container.encode(passes, forKey: .passes)
            try container.encodeIfPresent(stamp, forKey: .stamp)
            try container.encodeIfPresent(entries, forKey: .entries)
        }

        /// Changed only through a record that holds the only reference (see `unique`).
        private final class Fields: @unchecked Sendable {
            package var hash: PackedDigest
            package var passes: [String]
            package var stamp: String?
            package var entries: String?

            package init(hash: PackedDigest, passes: [String], stamp: String?, entries: String?) {
                self.hash = hash
                self.passes = passes
                self.stamp = stamp
                self.entries = entries
            }
        }
    }

    /// A pass that a build removed: kept so that a device still holding it
    /// can unregister (Apple's DELETE is authenticated with the pass's token)
    /// and its index stops listing it.
    package struct RemovedItemRecord: Codable, Sendable, Equatable {
        package var passTypeIdentifier: String
        package var serialNumber: String
        package var tokenHash: String
        /// The update tag of the build that removed it.
        package var removedTag: Int64
        /// The names its bytes had in the output tree, so that a publish can
        /// delete them at its destination, again and again without harm.
        package var files: [String] = []
        /// A pass or an order (absent in the file for a pass).
        package var kind: WalletItemKind = .pass

        package init(passTypeIdentifier: String, serialNumber: String, tokenHash: String, removedTag: Int64, files: [String] = [],
                     kind: WalletItemKind = .pass) {
            (self.passTypeIdentifier, self.serialNumber, self.tokenHash, self.removedTag, self.files, self.kind) =
                (passTypeIdentifier, serialNumber, tokenHash, removedTag, files, kind)
        }

        enum CodingKeys: String, CodingKey { case passTypeIdentifier, serialNumber, tokenHash, removedTag, files, kind }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(passTypeIdentifier: try container.decode(String.self, forKey: .passTypeIdentifier),
                      serialNumber: try container.decode(String.self, forKey: .serialNumber),
                      tokenHash: try container.decode(String.self, forKey: .tokenHash),
                      removedTag: try container.decode(Int64.self, forKey: .removedTag),
                      files: try container.decodeIfPresent([String].self, forKey: .files) ?? [],
                      kind: try container.decodeIfPresent(WalletItemKind.self, forKey: .kind) ?? .pass)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(passTypeIdentifier, forKey: .passTypeIdentifier)
            try container.encode(serialNumber, forKey: .serialNumber)
            try container.encode(tokenHash, forKey: .tokenHash)
            try container.encode(removedTag, forKey: .removedTag)
            try container.encode(files, forKey: .files)
            if kind != .pass { try container.encode(kind, forKey: .kind) }
        }

        package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }
    }

    package var version: Int = BuildState.currentVersion
    /// The greatest update tag ever given; the next build's tag is greater.
    package var lastUpdateTag: Int64 = 0
    package var builtAt: String = ""
    package var passes: [String: ItemRecord] = [:]
    package var contentFiles: [String: ContentFileRecord] = [:]
    /// Removed passes by key (`type/serial`); a pass built again leaves this list.
    package var removedPasses: [String: RemovedItemRecord] = [:]

    package init() {}

    package enum CodingKeys: String, CodingKey {
        case version, lastUpdateTag, builtAt, passes, contentFiles, removedPasses
    }

    /// States written before passes were remembered after removal have no `removedPasses`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        lastUpdateTag = try container.decode(Int64.self, forKey: .lastUpdateTag)
        builtAt = try container.decode(String.self, forKey: .builtAt)
        passes = try container.decode([String: ItemRecord].self, forKey: .passes)
        contentFiles = try container.decode([String: ContentFileRecord].self, forKey: .contentFiles)
        removedPasses = try container.decodeIfPresent([String: RemovedItemRecord].self, forKey: .removedPasses) ?? [:]
    }

    /// The strong ETag of a file's bytes: the first
    /// 128 bits of its SHA-256, quoted. The build records it; the server sends it.
    package static func etag(of bytes: [UInt8]) -> String {
        "\"" + String(sha256Hex(bytes).prefix(32)) + "\""
    }

    package static func path(in output: String) -> String { "\(output)/\(TreeLayout.statePath)" }

    /// Loads the state of a previous build, or an empty state for a first build.
    package static func load(from output: String) throws -> BuildState {
        try loadWithRecordRanges(from: output, mapped: false).state
    }

    /// The state of the output folder `output` from its file's bytes, already read (publish sends
    /// those very bytes, so it reads the file once).
    package static func decode(_ bytes: [UInt8], of output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount) throws -> BuildState {
        try decoded(of: output) { () throws(BuildStateDecoding.Failure) in try BuildStateDecoding.decode(bytes, jobs: jobs) }.state
    }

    /// What `decode` gives, checked: a failure or another version is an error for people, naming the file.
    private static func decoded(of output: String, _ decode: () throws(BuildStateDecoding.Failure) -> (BuildState, [(key: String, range: Range<Int>)]))
        throws -> (state: BuildState, ranges: [(key: String, range: Range<Int>)]) {
        let path = path(in: output)
        let decoded: (BuildState, [(key: String, range: Range<Int>)])
        do { decoded = try decode() } catch {
            throw BuildError(.unreadable, "\(path) is damaged (\(error)); delete \(output)/.passforge and build again — every pass is then rebuilt with its tokens kept only if PASSFORGE_TOKEN_SECRET is unchanged")
        }
        guard decoded.0.version == currentVersion else {
            throw BuildError(.unreadable, "\(path) was written by another passforge version (state version \(decoded.0.version)); delete \(output) and build again")
        }
        return decoded
    }

    /// The state, and where its pass records are in its file (nil for a first build).
    ///
    /// - Parameter mapped: read through a memory mapping rather than a copy: for a build, which holds the
    ///   output folder's lock (the state file is only ever replaced by a rename, never changed in place).
    package static func loadWithRecordRanges(from output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount, mapped: Bool = true) throws
        -> (state: BuildState, file: PreviousStateFile?) {
        let path = path(in: output)
        guard let file = RegularFile(openingForReading: path) else {
            guard AtomicFileSystem.exists(path) else { return (BuildState(), nil) }
            throw BuildError(.unreadable, "cannot read \(path); check its permissions")
        }
        // Mapped, not read: 90 MB at 100,000 passes, which need not be copied.
        let (state, ranges) = try decoded(of: output) { () throws(BuildStateDecoding.Failure) in
            if mapped, let mapping = MappedFile(file) {
                return try mapping.withBytes { bytes throws(BuildStateDecoding.Failure) in try BuildStateDecoding.decode(buffer: bytes, jobs: jobs) }
            } else if let bytes = file.readAll() {
                return try BuildStateDecoding.decode(bytes, jobs: jobs)
            }
            throw BuildStateDecoding.Failure(description: "it cannot be read whole")
        }
        return (state, PreviousStateFile(path: path, stamp: file.stamp, recordRanges: ranges))
    }

    package func encoded() throws -> [UInt8] {
        json.serialized()
    }
}

/// A build failure that is not tied to one content line.
/// Why a build, or a reader of the tree, could not go on: its kind, and a message for people that
/// names the file and says what to do. (The content's own problems are `ContentDiagnostic`s, at
/// file:line, in a `BuildFailure`.)
package struct BuildError: Error, CustomStringConvertible, Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// Another build holds the output folder.
        case busy
        /// A build state, journal or list that fails its checks — taken from a destination, or damaged
        /// here — refused whole, with nothing taken from it.
        case refused
        /// A file of the tree that cannot be read or decoded.
        case unreadable
        /// What the build needs from its environment or configuration is missing or wrong (the token
        /// secret, a signing identity).
        case configuration
        /// A file the build needs from an earlier build is not in the output folder.
        case missingInput
    }

    package var kind: Kind
    package var description: String

    package init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Hand-written mapping to PassModel's JSON tree, for encoding (records are
/// encoded in batches while the state is written; `BuildStateDecoding` reads
/// them back). The Codable conformance stays as the tests' oracle.
extension BuildState {
    package var json: JSONValue {
        var passes = JSONObject()
        for key in self.passes.keys.sorted() { passes[key] = self.passes[key]!.json }
        var files = JSONObject()
        for key in contentFiles.keys.sorted() {
            let file = contentFiles[key]!
            var object = JSONObject([("hash", .string(file.hash)), ("passes", .array(file.passes.map(JSONValue.string)))])
            if let stamp = file.stamp { object["identity"] = .string(stamp) }
            if let entries = file.entries { object["entries"] = .string(entries) }
            files[key] = .object(object)
        }
        var removed = JSONObject()
        for key in removedPasses.keys.sorted() {
            let record = removedPasses[key]!
            removed[key] = .object(JSONObject([
                ("passTypeIdentifier", .string(record.passTypeIdentifier)), ("serialNumber", .string(record.serialNumber)),
                ("tokenHash", .string(record.tokenHash)), ("removedTag", .int(Int(record.removedTag))),
                ("files", .array(record.files.map(JSONValue.string))),
            ] + (record.kind == .pass ? [] : [("kind", .string(record.kind.rawValue))])))
        }
        return .object(JSONObject([
            ("version", .int(version)), ("lastUpdateTag", .int(Int(lastUpdateTag))), ("builtAt", .string(builtAt)),
            ("passes", .object(passes)), ("contentFiles", .object(files)), ("removedPasses", .object(removed)),
        ]))
    }
}

extension BuildState.ItemRecord {
    package var json: JSONValue {
        var object = JSONObject([
            ("passTypeIdentifier", .string(passTypeIdentifier)), ("serialNumber", .string(serialNumber)),
            ("teamIdentifier", .string(teamIdentifier)), ("updateTag", .int(Int(updateTag))), ("etag", .string(etag)),
            ("size", .int(size)), ("fingerprint", .string(fingerprint)), ("definitionHash", .string(definitionHash)),
            ("templateName", .string(templateName)), ("imagePaths", .array(imagePaths.map(JSONValue.string))),
            ("sourceFile", .string(sourceFile)), ("downloadPath", .string(downloadPath)),
        ])
        if let tokenHash { object["tokenHash"] = .string(tokenHash) }
        if let publicDownloadPath { object["publicDownloadPath"] = .string(publicDownloadPath) }
        if let tokenPath { object["tokenPath"] = .string(tokenPath) }
        if let offer { object["offer"] = .string(offer) }
        if kind != .pass { object["kind"] = .string(kind.rawValue) }
        return .object(object)
    }
}
