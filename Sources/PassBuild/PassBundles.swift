import AtomicFiles
import Crypto
import Foundation
import PassContent
import PassModel
import PassPackage
import WalletTree

/// `.pkpasses` bundles: the passes of a content file with `bundle: NAME`,
/// offered as one download (Apple, "Distributing and updating a pass": a
/// zip of up to 10 `.pkpass` files, at most 150 MB, served as
/// `application/vnd.apple.pkpasses`).
///
/// A bundle lives at `download/<capability>.pkpasses`, where capability is
/// base64url(HMAC-SHA256(secret, "bundle/" + NAME)) cut to 22 characters:
/// stable, unguessable, and never equal to a pass's download capability
/// (whose input starts with "download/"). It is rebuilt when its members or
/// any member's bytes change, staged and moved into place by the build's
/// journal like every pass, and recorded in `.passforge/bundles.json`.
enum PassBundles {
    static let maximumSize = BundleList.maximumSize
    static let stateFile = BundleList.path
    typealias Record = BundleRecord

    /// What a build does to the bundles.
    struct Update: Sendable {
        var records: [String: Record] = [:]
        /// Staged bundles (and the staged bundles.json) to move into place.
        var moves: [OutputTree.Operation] = []
        var removals: [OutputTree.Operation] = []
        /// Rows for downloads.csv: `bundle,NAME,download/….pkpasses`.
        var csvRows = ""
        /// Whether anything on disk changes.
        var changed = false
        /// What the build reports: bundles made, bundles that could not be.
        var notes: [String] = []
    }

    /// The bundles of the last build, by name; none when there is no file (or a damaged one, rebuilt then).
    static func load(from output: String) -> [String: Record] {
        (try? loadChecked(from: output)) ?? [:]
    }

    /// `load`, throwing when a record fails `check`: its paths would be deleted.
    static func loadChecked(from output: String) throws -> [String: Record] {
        guard let bytes = AtomicFileSystem.readFile(TreeLayout.path(stateFile, in: output)) else { return [:] }
        do {
            return try BundleList.records(decoding: bytes, greatestTag: BuildState.greatestLocalTag) ?? [:]
        } catch {
            throw BuildError(
                .refused,
                "\(output)/\(stateFile) is refused: \(error); delete it and build again (every bundle is then made again)"
            )
        }
    }

    static func capability(name: String, secret: TokenSecret) -> String {
        String(
            base64URL(HMAC<SHA256>.authenticationCode(for: Array("bundle/\(name)".utf8), using: secret.key)).prefix(22))
    }

    /// Every bundle name is used by one content file only.
    static func checkUniqueNames(_ declarations: [String: BundleDeclaration]) throws {
        var first: [String: BundleDeclaration] = [:]
        var problems: [ContentDiagnostic] = []
        for file in declarations.keys.sorted() {
            let declaration = declarations[file]!
            if let earlier = first[declaration.name] {
                problems.append(
                    .error(
                        at: declaration.location, keyPath: ["bundle"], rule: "content.bundle-duplicate",
                        "bundle \(declaration.name) is already declared by another content file; bundle names are unique in the project (each is one download), so rename one",
                        notes: [(earlier.location, "first declared here")]))
            } else {
                first[declaration.name] = declaration
            }
        }
        if !problems.isEmpty { throw BuildFailure(diagnostics: problems) }
    }

    /// Decides which bundles to build, builds and stages them.
    ///
    /// - Parameters:
    ///   - declarations: content file → its bundle, for the files parsed in this build.
    ///   - contentFiles: the new build's content files (their passes, in order).
    ///   - passes: every pass of the new build, by key.
    ///   - stagedPaths: key → staged file of the passes signed in this build.
    static func update(
        declarations: [String: BundleDeclaration], contentFiles: [String: BuildState.ContentFileRecord],
        passes: [String: BuildState.ItemRecord], stagedPaths: [String: String], previous: [String: Record],
        secret: TokenSecret, tree: OutputTree, requiresLocalPassFiles: Bool, updateTag: Int64,
        signingTime: Date
    ) throws -> Update {
        // Files that were not parsed keep the bundle they declared, as long as their bytes are the same.
        var all = declarations
        for record in previous.values
        where all[record.sourceFile] == nil && contentFiles[record.sourceFile]?.hash == record.sourceHash {
            all[record.sourceFile] = BundleDeclaration(
                name: record.name, location: SourceLocation(file: record.sourceFile))
        }
        try checkUniqueNames(all)
        var update = Update()
        for file in all.keys.sorted() {
            let declaration = all[file]!
            guard let content = contentFiles[file] else { continue }
            let members = content.passes
            let etags = members.map { passes[$0]?.etag ?? "" }
            let path = TreeLayout.bundleDownloadPath(capability: capability(name: declaration.name, secret: secret))
            if let old = previous[declaration.name], old.members == members, old.memberETags == etags,
                old.downloadPath == path,
                !requiresLocalPassFiles || AtomicFileSystem.exists(tree.path(path))
            {
                var kept = old
                kept.sourceFile = file
                kept.sourceHash = content.hash
                update.records[declaration.name] = kept
                continue
            }
            let (entries, unavailable) = memberEntries(members, passes: passes, stagedPaths: stagedPaths, tree: tree)
            if let unavailable {
                // A build from a published state (--state-from) has only the passes it signs: the bundle keeps
                // its previous version, if any, until a build with the whole tree makes it again.
                guard !requiresLocalPassFiles else {
                    throw BuildError(
                        .missingInput,
                        "bundle \(declaration.name) (\(file)) needs \(unavailable), which is not in \(tree.directory)/; build again to restore it"
                    )
                }
                if let old = previous[declaration.name] { update.records[declaration.name] = old }
                update.notes.append(
                    "bundle \(declaration.name) not made: \(unavailable) is only at the published destination (--state-from); a build with the whole output tree makes it"
                )
                continue
            }
            try stage(
                declaration, from: file, hash: content.hash, entries: entries, members: members, etags: etags,
                path: path, tree: tree, updateTag: updateTag, signingTime: signingTime, into: &update)
        }
        for (name, old) in previous.sorted(by: { $0.key < $1.key })
        where update.records[name]?.downloadPath != old.downloadPath {
            update.removals.append(.init(kind: .remove, path: old.downloadPath))
        }
        update.changed = update.records != previous
        if update.changed {
            let list = update.records.keys.sorted().map { update.records[$0]!.json }
            try AtomicFileSystem.createDirectory(tree.stagingDirectory)  // no bundle (and no pass) may have been staged
            let staged = try tree.stage(
                JSONValue.object(JSONObject([("bundles", .array(list))])).serialized(pretty: true), name: "bundles.json"
            )
            update.moves.append(.init(kind: .move, path: stateFile, source: staged))
        }
        for name in update.records.keys.sorted() {
            update.csvRows += "bundle,\(name),\(update.records[name]!.downloadPath)\n"
        }
        return update
    }

    /// Zips `entries` into the bundle's download, stages it and records it in `update`.
    private static func stage(
        _ declaration: BundleDeclaration, from file: String, hash: String, entries: [ZipEntry],
        members: [String], etags: [String], path: String, tree: OutputTree, updateTag: Int64, signingTime: Date,
        into update: inout Update
    ) throws {
        let bytes = try ZipArchive.make(entries, modificationDate: signingTime)
        guard bytes.count <= maximumSize else {
            throw BuildFailure(diagnostics: [
                .error(
                    at: declaration.location, keyPath: ["bundle"], rule: "content.bundle-size",
                    "bundle \(declaration.name) is \(bytes.count >> 20) MB; Apple accepts at most 150 MB in one .pkpasses download, so split it or use smaller images"
                )
            ])
        }
        try AtomicFileSystem.createDirectory(tree.stagingDirectory)
        let staged = "\(tree.stagingFolder)/bundle-\(declaration.name).pkpasses"
        try AtomicFileSystem.createFile(bytes, at: tree.path(staged), modifiedAt: updateTag)
        update.moves.append(.init(kind: .move, path: path, source: staged))
        update.records[declaration.name] = Record(
            name: declaration.name, sourceFile: file, sourceHash: hash, members: members,
            memberETags: etags,
            downloadPath: path, etag: BuildState.etag(of: bytes), size: bytes.count, updateTag: updateTag)
        update.notes.append("built bundle \(declaration.name)")
    }

    /// The bundle's entries: each member's package, named by its serial (by type and serial when two share one);
    /// or the path of the first member whose file is not in the tree.
    private static func memberEntries(
        _ members: [String], passes: [String: BuildState.ItemRecord], stagedPaths: [String: String],
        tree: OutputTree
    ) -> (entries: [ZipEntry], unavailable: String?) {
        var entries: [ZipEntry] = []
        var names = Set<String>()
        for key in members {
            guard let record = passes[key] else { continue }
            let source = stagedPaths[key].map { tree.path($0) } ?? tree.path(record.path)
            guard let bytes = AtomicFileSystem.readFile(source) else { return (entries, record.path) }
            var name = "\(record.identifier).pkpass"
            if !names.insert(name).inserted {
                name = "\(record.typeIdentifier).\(record.identifier).pkpass"
                names.insert(name)
            }
            entries.append(ZipEntry(name: name, bytes: bytes, isCompressed: false))
        }
        return (entries, nil)
    }
}
