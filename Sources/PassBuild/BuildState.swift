import AtomicFiles
import Foundation
import PassModel

/// What the last build made, kept in `output/.passforge/state.json`.
///
/// It is committed last, so it always describes files that are complete on
/// disk. `passforge serve` reads tokens, ETags and update tags from it.
package struct BuildState: Codable, Sendable, Equatable {
    package static let currentVersion = 1

    package struct PassRecord: Codable, Sendable, Equatable {
        package var passTypeIdentifier: String
        package var serialNumber: String
        package var teamIdentifier: String
        /// Update tag: milliseconds since 1970 of the build that last changed the pass.
        package var updateTag: Int64
        /// Strong ETag of the .pkpass bytes, with its quotes: `"3f2a…"`.
        package var etag: String
        package var size: Int
        /// Hex SHA-256 of the authentication token; the token itself is never stored.
        package var tokenHash: String?
        /// Hash of every input of the pass: content entry, template, images, config, identity.
        package var fingerprint: String
        /// Hash of the content entry alone, to re-check a cached file without parsing it.
        package var definitionHash: String
        package var templateName: String
        /// Per-pass image files (paths), re-hashed on every build.
        package var imagePaths: [String]
        package var sourceFile: String
        /// `download/<capability>.pkpass`, relative to the output folder.
        package var downloadPath: String
        package var publicDownloadPath: String?
        /// `by-token/<type>/<serial>.<authenticationToken>`: the same bytes under a
        /// name a static host finds from the `Authorization: ApplePass` header;
        /// nil for a pass without a web service (or built before such names).
        package var tokenPath: String? = nil

        package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }
        package var path: String { "v1/passes/\(passTypeIdentifier)/\(serialNumber)" }

        /// Every name of the pass's bytes in the output tree.
        package var files: [String] {
            [path, downloadPath] + [publicDownloadPath, tokenPath].compactMap { $0 }
        }

        /// The token-keyed name of a pass: what a static host serves for
        /// `GET v1/passes/<type>/<serial>` with `Authorization: ApplePass <token>`.
        package static func tokenPath(passTypeIdentifier: String, serialNumber: String, token: String) -> String {
            "by-token/\(passTypeIdentifier)/\(serialNumber).\(token)"
        }
    }

    package struct ContentFileRecord: Codable, Sendable, Equatable {
        /// SHA-256 of the file's bytes.
        package var hash: String
        /// Keys (`type/serial`) of the passes the file defines, in order.
        package var passes: [String]
        /// The file's size, times and inode when it was hashed (see `FileStamp`):
        /// while they stay the same, the next build need not read it again.
        package var identity: String? = nil
        /// For a YAML file with `passes:`, the hash of its header and of each
        /// entry (see `PassListEntries`): the next build parses only the entries that changed.
        package var entries: String? = nil
    }

    /// A pass that a build removed: kept so that a device still holding it
    /// can unregister (Apple's DELETE is authenticated with the pass's token)
    /// and its index stops listing it.
    package struct RemovedPassRecord: Codable, Sendable, Equatable {
        package var passTypeIdentifier: String
        package var serialNumber: String
        package var tokenHash: String
        /// The update tag of the build that removed it.
        package var removedTag: Int64
        /// The names its bytes had in the output tree, so that a publish can
        /// delete them at its destination, again and again without harm.
        package var files: [String] = []

        package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }
    }

    package var version: Int = BuildState.currentVersion
    /// The greatest update tag ever given; the next build's tag is greater.
    package var lastUpdateTag: Int64 = 0
    package var builtAt: String = ""
    package var passes: [String: PassRecord] = [:]
    package var contentFiles: [String: ContentFileRecord] = [:]
    /// Removed passes by key (`type/serial`); a pass built again leaves this list.
    package var removedPasses: [String: RemovedPassRecord] = [:]

    package init() {}

    enum CodingKeys: String, CodingKey {
        case version, lastUpdateTag, builtAt, passes, contentFiles, removedPasses
    }

    /// States written before passes were remembered after removal have no `removedPasses`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        lastUpdateTag = try container.decode(Int64.self, forKey: .lastUpdateTag)
        builtAt = try container.decode(String.self, forKey: .builtAt)
        passes = try container.decode([String: PassRecord].self, forKey: .passes)
        contentFiles = try container.decode([String: ContentFileRecord].self, forKey: .contentFiles)
        removedPasses = try container.decodeIfPresent([String: RemovedPassRecord].self, forKey: .removedPasses) ?? [:]
    }

    /// The strong ETag of a file's bytes: the first
    /// 128 bits of its SHA-256, quoted. The build records it; the server sends it.
    package static func etag(of bytes: [UInt8]) -> String {
        "\"" + String(sha256Hex(bytes).prefix(32)) + "\""
    }

    package static func path(in output: String) -> String { "\(output)/.passforge/state.json" }

    /// Loads the state of a previous build, or an empty state for a first build.
    package static func load(from output: String) throws -> BuildState {
        try loadWithRecordRanges(from: output).state
    }

    /// The state, and where its pass records are in its file (nil for a first build).
    static func loadWithRecordRanges(from output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount) throws
        -> (state: BuildState, file: PreviousStateFile?) {
        let path = path(in: output)
        guard let file = RegularFile(openingForReading: path) else {
            guard FileManager.default.fileExists(atPath: path) else { return (BuildState(), nil) }
            throw BuildError.message("cannot read \(path); check its permissions")
        }
        do {
            guard let bytes = file.readAll() else { throw BuildStateDecoding.Failure(description: "it cannot be read whole") }
            let (state, ranges) = try BuildStateDecoding.decode(consume bytes, jobs: jobs)
            guard state.version == currentVersion else {
                throw BuildError.message("\(path) was written by another passforge version (state version \(state.version)); delete \(output) and build again")
            }
            return (state, PreviousStateFile(path: path, identity: file.identity, recordRanges: ranges))
        } catch let error as BuildError {
            throw error
        } catch {
            throw BuildError.message("\(path) is damaged (\(error)); delete \(output)/.passforge and build again — every pass is then rebuilt with its tokens kept only if PASSFORGE_TOKEN_SECRET is unchanged")
        }
    }

    package func encoded() throws -> [UInt8] {
        json.serialized()
    }
}

/// A build failure that is not tied to one content line.
package enum BuildError: Error, CustomStringConvertible, Sendable {
    case message(String)
    package var description: String {
        switch self { case .message(let text): return text }
    }
}

/// Hand-written mapping to PassModel's JSON tree: a 10,000-pass state loads and
/// saves several times faster than through Foundation's JSON coders, which
/// matters for a one-pass rebuild. The Codable conformance stays for tools.
extension BuildState {
    struct DecodingFailure: Error, CustomStringConvertible {
        var description: String
    }

    var json: JSONValue {
        var passes = JSONObject()
        for key in self.passes.keys.sorted() { passes[key] = self.passes[key]!.json }
        var files = JSONObject()
        for key in contentFiles.keys.sorted() {
            let file = contentFiles[key]!
            var object = JSONObject([("hash", .string(file.hash)), ("passes", .array(file.passes.map(JSONValue.string)))])
            if let identity = file.identity { object["identity"] = .string(identity) }
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
            ]))
        }
        return .object(JSONObject([
            ("version", .int(version)), ("lastUpdateTag", .int(Int(lastUpdateTag))), ("builtAt", .string(builtAt)),
            ("passes", .object(passes)), ("contentFiles", .object(files)), ("removedPasses", .object(removed)),
        ]))
    }

    init(json: JSONValue) throws {
        guard let version = json["version"].flatMap({ if case .int(let v) = $0 { v } else { nil } }) else {
            throw DecodingFailure(description: "no version")
        }
        self.init()
        self.version = version
        guard version == BuildState.currentVersion else { return }
        if case .int(let tag)? = json["lastUpdateTag"] { lastUpdateTag = Int64(tag) }
        builtAt = json["builtAt"]?.stringValue ?? ""
        for (key, value) in json["passes"]?.objectValue ?? JSONObject() {
            passes[key] = try PassRecord(json: value)
        }
        for (key, value) in json["contentFiles"]?.objectValue ?? JSONObject() {
            guard let hash = value["hash"]?.stringValue, let list = value["passes"]?.arrayValue else {
                throw DecodingFailure(description: "content file \(key) is incomplete")
            }
            contentFiles[key] = ContentFileRecord(hash: hash, passes: list.compactMap(\.stringValue), identity: value["identity"]?.stringValue,
                                                  entries: value["entries"]?.stringValue)
        }
        for (key, value) in json["removedPasses"]?.objectValue ?? JSONObject() {
            guard let type = value["passTypeIdentifier"]?.stringValue, let serial = value["serialNumber"]?.stringValue,
                  let tokenHash = value["tokenHash"]?.stringValue, case .int(let tag)? = value["removedTag"] else {
                throw DecodingFailure(description: "removed pass \(key) is incomplete")
            }
            removedPasses[key] = RemovedPassRecord(passTypeIdentifier: type, serialNumber: serial, tokenHash: tokenHash, removedTag: Int64(tag),
                                                   files: (value["files"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }
}

extension BuildState.PassRecord {
    var json: JSONValue {
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
        return .object(object)
    }

    init(json: JSONValue) throws {
        func text(_ key: String) throws -> String {
            guard let value = json[key]?.stringValue else { throw BuildState.DecodingFailure(description: "a pass has no \(key)") }
            return value
        }
        func integer(_ key: String) throws -> Int {
            guard case .int(let value)? = json[key] else { throw BuildState.DecodingFailure(description: "a pass has no \(key)") }
            return value
        }
        self.init(
            passTypeIdentifier: try text("passTypeIdentifier"), serialNumber: try text("serialNumber"),
            teamIdentifier: try text("teamIdentifier"), updateTag: Int64(try integer("updateTag")), etag: try text("etag"),
            size: try integer("size"), tokenHash: json["tokenHash"]?.stringValue, fingerprint: try text("fingerprint"),
            definitionHash: try text("definitionHash"), templateName: try text("templateName"),
            imagePaths: (json["imagePaths"]?.arrayValue ?? []).compactMap(\.stringValue), sourceFile: try text("sourceFile"),
            downloadPath: try text("downloadPath"), publicDownloadPath: json["publicDownloadPath"]?.stringValue,
            tokenPath: json["tokenPath"]?.stringValue)
    }
}
