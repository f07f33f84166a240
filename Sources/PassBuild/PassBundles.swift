import AtomicFiles
import Crypto
import Foundation
import PassContent
import PassModel
import PassPackage

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
    static let maximumSize = 150 << 20
    static let stateFile = ".passforge/bundles.json"

    /// One bundle as the last build made it.
    struct Record: Sendable, Equatable {
        var name: String
        var sourceFile: String
        /// SHA-256 of the content file that declared it.
        var sourceHash: String
        /// Keys (`type/serial`) of its passes, in order.
        var members: [String]
        /// The ETag of each member when the bundle was made.
        var memberETags: [String]
        var downloadPath: String
        var etag: String
        var size: Int
        var updateTag: Int64

        var json: JSONValue {
            .object(JSONObject([
                ("name", .string(name)), ("sourceFile", .string(sourceFile)), ("sourceHash", .string(sourceHash)),
                ("members", .array(members.map(JSONValue.string))), ("memberETags", .array(memberETags.map(JSONValue.string))),
                ("downloadPath", .string(downloadPath)), ("etag", .string(etag)), ("size", .int(size)),
                ("updateTag", .int(Int(updateTag))),
            ]))
        }

        init(name: String, sourceFile: String, sourceHash: String, members: [String], memberETags: [String],
             downloadPath: String, etag: String, size: Int, updateTag: Int64) {
            (self.name, self.sourceFile, self.sourceHash, self.members, self.memberETags) = (name, sourceFile, sourceHash, members, memberETags)
            (self.downloadPath, self.etag, self.size, self.updateTag) = (downloadPath, etag, size, updateTag)
        }

        /// The name is a bundle name, the path a bundle path, the members pass keys, the tag near now.
        func check(greatestTag: Int64) throws(BuildState.Problem) {
            guard TreeLayout.isSerial(name) else {
                throw BuildState.Problem("bundle \(BuildState.quoted(name)) has a name that does not match [A-Za-z0-9][A-Za-z0-9._~-]{0,127}")
            }
            guard TreeLayout.isCapabilityDownload(downloadPath, bundle: true) else {
                throw BuildState.Problem("bundle \(name) has downloadPath \(BuildState.quoted(downloadPath)), which is not download/<capability>.pkpasses")
            }
            guard updateTag >= 0, updateTag <= greatestTag else {
                throw BuildState.Problem("bundle \(name) has updateTag \(updateTag), not an update tag of this build's time (0 to \(greatestTag))")
            }
            guard (0...maximumSize).contains(size) else { throw BuildState.Problem("bundle \(name) has size \(size), beyond 0 to 150 MB") }
            try BuildState.checkText(sourceFile, "the content file of bundle \(name)")
            try BuildState.checkText(sourceHash, "sourceHash of bundle \(name)")
            for key in members where !TreeLayout.isPassKey(key) {
                throw BuildState.Problem("bundle \(name) lists member \(BuildState.quoted(key)), which is not passTypeIdentifier/serialNumber")
            }
            for etag in memberETags { try BuildState.checkText(etag, "a member ETag of bundle \(name)") }
        }

        init?(json: JSONValue) {
            guard let name = json["name"]?.stringValue, let sourceFile = json["sourceFile"]?.stringValue,
                  let sourceHash = json["sourceHash"]?.stringValue, let members = json["members"]?.arrayValue,
                  let etags = json["memberETags"]?.arrayValue, let path = json["downloadPath"]?.stringValue,
                  let etag = json["etag"]?.stringValue, case .int(let size)? = json["size"], case .int(let tag)? = json["updateTag"]
            else { return nil }
            self.init(name: name, sourceFile: sourceFile, sourceHash: sourceHash, members: members.compactMap(\.stringValue),
                      memberETags: etags.compactMap(\.stringValue), downloadPath: path, etag: etag, size: size, updateTag: Int64(tag))
        }
    }

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
        guard let bytes = AtomicFileSystem.readFile("\(output)/\(stateFile)") else { return [:] }
        do {
            return try records(decoding: bytes, greatestTag: BuildState.greatestLocalTag) ?? [:]
        } catch {
            throw BuildError.message("\(output)/\(stateFile) is refused: \(error); delete it and build again (every bundle is then made again)")
        }
    }

    /// The records of a bundles.json, by name; nil when the bytes are not a bundle list.
    static func records(decoding bytes: [UInt8], greatestTag: Int64) throws(BuildState.Problem) -> [String: Record]? {
        guard let json = try? JSONValue(parsing: bytes), let list = json["bundles"]?.arrayValue else { return nil }
        var records: [String: Record] = [:]
        for item in list {
            guard let record = Record(json: item) else { continue }
            try record.check(greatestTag: greatestTag)
            records[record.name] = record
        }
        return records
    }

    static func capability(name: String, secret: TokenSecret) -> String {
        String(base64URL(HMAC<SHA256>.authenticationCode(for: Array("bundle/\(name)".utf8), using: secret.key)).prefix(22))
    }

    /// Every bundle name is used by one content file only.
    static func checkUniqueNames(_ declarations: [String: BundleDeclaration]) throws {
        var first: [String: BundleDeclaration] = [:]
        var problems: [ContentDiagnostic] = []
        for file in declarations.keys.sorted() {
            let declaration = declarations[file]!
            if let earlier = first[declaration.name] {
                problems.append(.error(at: declaration.location, keyPath: ["bundle"], rule: "content.bundle-duplicate",
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
    static func update(declarations: [String: BundleDeclaration], contentFiles: [String: BuildState.ContentFileRecord],
                       passes: [String: BuildState.PassRecord], stagedPaths: [String: String], previous: [String: Record],
                       secret: TokenSecret, tree: OutputTree, requiresLocalPassFiles: Bool, updateTag: Int64,
                       signingTime: Date) throws -> Update {
        // Files that were not parsed keep the bundle they declared, as long as their bytes are the same.
        var all = declarations
        for record in previous.values where all[record.sourceFile] == nil && contentFiles[record.sourceFile]?.hash == record.sourceHash {
            all[record.sourceFile] = BundleDeclaration(name: record.name, location: SourceLocation(file: record.sourceFile))
        }
        try checkUniqueNames(all)
        var update = Update()
        for file in all.keys.sorted() {
            let declaration = all[file]!
            guard let content = contentFiles[file] else { continue }
            let members = content.passes
            let etags = members.map { passes[$0]?.etag ?? "" }
            let path = "download/\(capability(name: declaration.name, secret: secret)).pkpasses"
            if let old = previous[declaration.name], old.members == members, old.memberETags == etags, old.downloadPath == path,
               !requiresLocalPassFiles || FileManager.default.fileExists(atPath: "\(tree.directory)/\(path)") {
                var kept = old
                kept.sourceFile = file
                kept.sourceHash = content.hash
                update.records[declaration.name] = kept
                continue
            }
            var entries: [ZipEntry] = []
            var names = Set<String>()
            var unavailable: String?
            for key in members {
                guard let record = passes[key] else { continue }
                let source = stagedPaths[key].map { "\(tree.directory)/\($0)" } ?? "\(tree.directory)/\(record.path)"
                guard let bytes = AtomicFileSystem.readFile(source) else {
                    unavailable = record.path
                    break
                }
                var name = "\(record.serialNumber).pkpass"
                if !names.insert(name).inserted {
                    name = "\(record.passTypeIdentifier).\(record.serialNumber).pkpass"
                    names.insert(name)
                }
                entries.append(ZipEntry(name: name, bytes: bytes, isCompressed: false))
            }
            if let unavailable {
                // A build from a published state (--state-from) has only the passes it signs: the bundle keeps
                // its previous version, if any, until a build with the whole tree makes it again.
                guard !requiresLocalPassFiles else {
                    throw BuildError.message("bundle \(declaration.name) (\(file)) needs \(unavailable), which is not in \(tree.directory)/; build again to restore it")
                }
                if let old = previous[declaration.name] { update.records[declaration.name] = old }
                update.notes.append("bundle \(declaration.name) not made: \(unavailable) is only at the published destination (--state-from); a build with the whole output tree makes it")
                continue
            }
            let bytes = try ZipArchive.make(entries, modificationDate: signingTime)
            guard bytes.count <= maximumSize else {
                throw BuildFailure(diagnostics: [.error(
                    at: declaration.location, keyPath: ["bundle"], rule: "content.bundle-size",
                    "bundle \(declaration.name) is \(bytes.count >> 20) MB; Apple accepts at most 150 MB in one .pkpasses download, so split it or use smaller images")])
            }
            try AtomicFileSystem.createDirectory(tree.stagingDirectory)
            let staged = "\(tree.stagingFolder)/bundle-\(declaration.name).pkpasses"
            try AtomicFileSystem.createFile(bytes, at: "\(tree.directory)/\(staged)", modifiedAt: updateTag)
            update.moves.append(.init(kind: .move, path: path, source: staged))
            update.records[declaration.name] = Record(
                name: declaration.name, sourceFile: file, sourceHash: content.hash, members: members, memberETags: etags,
                downloadPath: path, etag: BuildState.etag(of: bytes), size: bytes.count, updateTag: updateTag)
            update.notes.append("built bundle \(declaration.name)")
        }
        for (name, old) in previous.sorted(by: { $0.key < $1.key }) where update.records[name]?.downloadPath != old.downloadPath {
            update.removals.append(.init(kind: .remove, path: old.downloadPath))
        }
        update.changed = update.records != previous
        if update.changed {
            let list = update.records.keys.sorted().map { update.records[$0]!.json }
            try AtomicFileSystem.createDirectory(tree.stagingDirectory)  // no bundle (and no pass) may have been staged
            let staged = try tree.stage(JSONValue.object(JSONObject([("bundles", .array(list))])).serialized(pretty: true), name: "bundles.json")
            update.moves.append(.init(kind: .move, path: stateFile, source: staged))
        }
        for name in update.records.keys.sorted() {
            update.csvRows += "bundle,\(name),\(update.records[name]!.downloadPath)\n"
        }
        return update
    }
}
