import AtomicFiles
import Foundation
package import PassModel

/// The build's cache: what the last build made and read, kept in `output/.passforge/state.json`.
///
/// It is committed last, so it always describes files that are complete on disk. Only the build (and what
/// writes the state: a build, `--state-from`, a publish that copies it) holds one; every reader of the tree
/// (`serve`, `push`, `publish`'s plan, `links`, `stats`) reads a `PublishedIndex` of the same file, without
/// the fingerprints and content files here. Its keys are `ItemKey.text`; the file's keys are `StateField`'s.
package struct BuildState: Sendable, Equatable {
    package static let currentVersion = 1

    /// One item (a pass or an order) as the last build made it.
    ///
    /// Its fields are kept in one object, shared by copies until one is changed: a dictionary of 100,000
    /// records then holds a reference each (a record's fields inline take 232 bytes, in a dictionary
    /// about twice that with its empty slots), a copy is one retain, and the hashes are kept as bytes
    /// (see `PackedDigest`). The object is private to this type: only the record's own setters change it,
    /// and each copies it first unless the record holds the only reference (`unique`), so records on
    /// different threads never change one object.
    package struct ItemRecord: Sendable, Equatable {
        private var fields: Fields

        package init(
            typeIdentifier: String, identifier: String, teamIdentifier: String, updateTag: Int64, etag: String,
            size: Int,
            tokenHash: String? = nil, fingerprint: String, definitionHash: String, templateName: String,
            imagePaths: [String],
            sourceFile: String, downloadPath: String, publicDownloadPath: String? = nil, tokenPath: String? = nil,
            offer: String? = nil, kind: WalletItemKind = .pass
        ) {
            self.init(
                typeIdentifier: typeIdentifier, identifier: identifier, teamIdentifier: teamIdentifier,
                updateTag: updateTag,
                packedETag: PackedDigest(etag), size: size, tokenHash: tokenHash.map(PackedDigest.init),
                fingerprint: PackedDigest(fingerprint), definitionHash: PackedDigest(definitionHash),
                templateName: templateName,
                imagePaths: imagePaths, sourceFile: sourceFile, downloadPath: downloadPath,
                publicDownloadPath: publicDownloadPath,
                tokenPath: tokenPath, offer: offer, kind: kind)
        }

        /// A record from hashes already packed (the decoder's).
        package init(
            typeIdentifier: String, identifier: String, teamIdentifier: String, updateTag: Int64,
            packedETag: PackedDigest,
            size: Int, tokenHash: PackedDigest?, fingerprint: PackedDigest, definitionHash: PackedDigest,
            templateName: String,
            imagePaths: [String], sourceFile: String, downloadPath: String, publicDownloadPath: String?,
            tokenPath: String?,
            offer: String?, kind: WalletItemKind
        ) {
            fields = Fields(
                typeIdentifier: typeIdentifier, identifier: identifier, teamIdentifier: teamIdentifier,
                updateTag: updateTag,
                etag: packedETag, size: size, tokenHash: tokenHash, fingerprint: fingerprint,
                definitionHash: definitionHash,
                templateName: templateName, imagePaths: imagePaths, sourceFile: sourceFile, downloadPath: downloadPath,
                publicDownloadPath: publicDownloadPath, tokenPath: tokenPath, offer: offer, kind: kind)
        }

        /// A pass's `passTypeIdentifier` or an order's `orderTypeIdentifier`.
        package var typeIdentifier: String {
            get { fields.typeIdentifier }
            set { unique().typeIdentifier = newValue }
        }
        /// A pass's `serialNumber` or an order's `orderIdentifier`.
        package var identifier: String {
            get { fields.identifier }
            set { unique().identifier = newValue }
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
        /// A pass or an order: both kinds share one namespace of type identifiers (see `ItemKey`).
        package var kind: WalletItemKind {
            get { fields.kind }
            set { unique().kind = newValue }
        }

        /// The hashes as they are kept, to compare without spelling them out.
        package var packedETag: PackedDigest { fields.etag }
        package var packedTokenHash: PackedDigest? { fields.tokenHash }
        package var packedFingerprint: PackedDigest { fields.fingerprint }
        package var packedDefinitionHash: PackedDigest { fields.definitionHash }
        package var hasTokenHash: Bool { fields.tokenHash != nil }

        package var itemKey: ItemKey { ItemKey(kind: kind, typeIdentifier: typeIdentifier, identifier: identifier) }
        /// `<type>/<identifier>` (`ItemKey.text`): the record's key in `BuildState.passes`.
        package var key: String { ItemKey.text(typeIdentifier: typeIdentifier, identifier: identifier) }
        package var path: String { TreeLayout.itemPath(kind: kind, type: typeIdentifier, identifier: identifier) }

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

        /// The token-keyed name of an item: what a static host serves for
        /// `GET v1/passes/<type>/<serial>` with `Authorization: ApplePass <token>`.
        package static func tokenPath(typeIdentifier: String, identifier: String, token: String) -> String {
            TreeLayout.tokenPath(type: typeIdentifier, identifier: identifier, token: token)
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.fields === rhs.fields || lhs.fields.hasSameValues(as: rhs.fields)
        }

        /// The fields, copied first when another record shares them.
        private mutating func unique() -> Fields {
            if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
            return fields
        }

        /// The fields of a record. Private to the record, and changed only through a record that holds the
        /// only reference (see `unique`): that is what makes the class safe to send.
        private final class Fields: @unchecked Sendable {
            var typeIdentifier: String
            var identifier: String
            var teamIdentifier: String
            var updateTag: Int64
            var etag: PackedDigest
            var size: Int
            var tokenHash: PackedDigest?
            var fingerprint: PackedDigest
            var definitionHash: PackedDigest
            var templateName: String
            var imagePaths: [String]
            var sourceFile: String
            var downloadPath: String
            var publicDownloadPath: String?
            var tokenPath: String?
            var offer: String?
            var kind: WalletItemKind

            init(
                typeIdentifier: String, identifier: String, teamIdentifier: String, updateTag: Int64,
                etag: PackedDigest, size: Int,
                tokenHash: PackedDigest?, fingerprint: PackedDigest, definitionHash: PackedDigest, templateName: String,
                imagePaths: [String], sourceFile: String, downloadPath: String, publicDownloadPath: String?,
                tokenPath: String?,
                offer: String?, kind: WalletItemKind
            ) {
                (self.typeIdentifier, self.identifier, self.teamIdentifier, self.updateTag) = (
                    typeIdentifier, identifier, teamIdentifier, updateTag
                )
                (self.etag, self.size, self.tokenHash, self.fingerprint) = (etag, size, tokenHash, fingerprint)
                (self.definitionHash, self.templateName, self.imagePaths, self.sourceFile) = (
                    definitionHash, templateName, imagePaths, sourceFile
                )
                (self.downloadPath, self.publicDownloadPath, self.tokenPath) = (
                    downloadPath, publicDownloadPath, tokenPath
                )
                (self.offer, self.kind) = (offer, kind)
            }

            func copy() -> Fields {
                Fields(
                    typeIdentifier: typeIdentifier, identifier: identifier, teamIdentifier: teamIdentifier,
                    updateTag: updateTag,
                    etag: etag, size: size, tokenHash: tokenHash, fingerprint: fingerprint,
                    definitionHash: definitionHash,
                    templateName: templateName, imagePaths: imagePaths, sourceFile: sourceFile,
                    downloadPath: downloadPath,
                    publicDownloadPath: publicDownloadPath, tokenPath: tokenPath, offer: offer, kind: kind)
            }

            func hasSameValues(as other: Fields) -> Bool {
                typeIdentifier == other.typeIdentifier && identifier == other.identifier
                    && teamIdentifier == other.teamIdentifier && updateTag == other.updateTag && etag == other.etag
                    && size == other.size
                    && tokenHash == other.tokenHash && fingerprint == other.fingerprint
                    && definitionHash == other.definitionHash
                    && templateName == other.templateName && imagePaths == other.imagePaths
                    && sourceFile == other.sourceFile
                    && downloadPath == other.downloadPath && publicDownloadPath == other.publicDownloadPath
                    && tokenPath == other.tokenPath
                    && offer == other.offer && kind == other.kind
            }
        }
    }

    /// A content file as the last build read it. Its fields are kept in one object, as a pass record's are.
    package struct ContentFileRecord: Sendable, Equatable {
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

        /// Changed only through a record that holds the only reference (see `unique`).
        private final class Fields: @unchecked Sendable {
            var hash: PackedDigest
            var passes: [String]
            var stamp: String?
            var entries: String?

            init(hash: PackedDigest, passes: [String], stamp: String?, entries: String?) {
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
    package struct RemovedItemRecord: Sendable, Equatable {
        /// A pass's `passTypeIdentifier` or an order's `orderTypeIdentifier`.
        package var typeIdentifier: String
        /// A pass's `serialNumber` or an order's `orderIdentifier`.
        package var identifier: String
        package var tokenHash: String
        /// The update tag of the build that removed it.
        package var removedTag: Int64
        /// The names its bytes had in the output tree, so that a publish can
        /// delete them at its destination, again and again without harm.
        package var files: [String] = []
        /// A pass or an order (absent in the file for a pass).
        package var kind: WalletItemKind = .pass

        package init(
            typeIdentifier: String, identifier: String, tokenHash: String, removedTag: Int64, files: [String] = [],
            kind: WalletItemKind = .pass
        ) {
            (self.typeIdentifier, self.identifier, self.tokenHash, self.removedTag, self.files, self.kind) =
                (typeIdentifier, identifier, tokenHash, removedTag, files, kind)
        }

        package var itemKey: ItemKey { ItemKey(kind: kind, typeIdentifier: typeIdentifier, identifier: identifier) }
        /// `<type>/<identifier>` (`ItemKey.text`): the record's key in `BuildState.removedPasses`.
        package var key: String { ItemKey.text(typeIdentifier: typeIdentifier, identifier: identifier) }
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

    /// The strong ETag of a file's bytes: the first
    /// 128 bits of its SHA-256, quoted. The build records it; the server sends it.
    package static func etag(of bytes: [UInt8]) -> String {
        "\"" + String(sha256Hex(bytes).prefix(32)) + "\""
    }

    package static func path(in output: String) -> String { TreeLayout.path(TreeLayout.statePath, in: output) }

    /// Loads the state of a previous build, or an empty state for a first build.
    package static func load(from output: String) throws -> BuildState {
        try loadWithRecordRanges(from: output, mapped: false).state
    }

    /// The state of the output folder `output` from its file's bytes, already read (publish sends
    /// those very bytes, so it reads the file once).
    package static func decode(
        _ bytes: [UInt8], of output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> BuildState {
        try decoded(of: output) { () throws(BuildStateDecoding.Failure) in
            try BuildStateDecoding.decode(bytes, jobs: jobs)
        }.state
    }

    /// What `decode` gives, checked: a failure or another version is an error for people, naming the file.
    private static func decoded(
        of output: String,
        _ decode: () throws(BuildStateDecoding.Failure) -> (BuildState, [(key: String, range: Range<Int>)])
    )
        throws -> (state: BuildState, ranges: [(key: String, range: Range<Int>)])
    {
        let path = path(in: output)
        let decoded: (BuildState, [(key: String, range: Range<Int>)])
        do { decoded = try decode() } catch {
            throw BuildError(
                .unreadable,
                "\(path) is damaged (\(error)); delete \(output)/.passforge and build again — every pass is then rebuilt with its tokens kept only if PASSFORGE_TOKEN_SECRET is unchanged"
            )
        }
        guard decoded.0.version == currentVersion else {
            throw BuildError(
                .unreadable,
                "\(path) was written by another passforge version (state version \(decoded.0.version)); delete \(output) and build again"
            )
        }
        return decoded
    }

    /// The state, and where its pass records are in its file (nil for a first build).
    ///
    /// - Parameter mapped: read through a memory mapping rather than a copy: for a build, which holds the
    ///   output folder's lock (the state file is only ever replaced by a rename, never changed in place).
    package static func loadWithRecordRanges(
        from output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount, mapped: Bool = true
    ) throws
        -> (state: BuildState, file: PreviousStateFile?)
    {
        let path = path(in: output)
        guard let file = RegularFile(openingForReading: path) else {
            guard AtomicFileSystem.exists(path) else { return (BuildState(), nil) }
            throw BuildError(.unreadable, "cannot read \(path); check its permissions")
        }
        // Mapped, not read: 90 MB at 100,000 passes, which need not be copied.
        let (state, ranges) = try decoded(of: output) { () throws(BuildStateDecoding.Failure) in
            if mapped, let mapping = MappedFile(file) {
                return try mapping.withBytes { bytes throws(BuildStateDecoding.Failure) in
                    try BuildStateDecoding.decode(buffer: bytes, jobs: jobs)
                }
            } else if let bytes = file.readAll() {
                return try BuildStateDecoding.decode(bytes, jobs: jobs)
            }
            throw BuildStateDecoding.Failure(description: "it cannot be read whole")
        }
        return (state, PreviousStateFile(path: path, stamp: file.stamp, recordRanges: ranges))
    }

    /// The bytes of `state.json` (`BuildStateEncoding`, on one thread).
    package func encoded() throws -> [UInt8] {
        BuildStateEncoding.encode(self, jobs: 1)
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
