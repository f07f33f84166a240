import AtomicFiles
import Foundation
import PassModel

/// The output folder — `v1/passes/<type>/<serial>`, `download/…`, the device
/// indices and `.passforge/state.json` — and the one way it changes: stage every new
/// file, flush them, write a journal, move them into place, commit the state.
///
/// A build killed before the journal is written leaves the previous tree as
/// it was; one killed after it is finished by the next build (roll forward).
public struct OutputTree: Sendable {
    public var directory: String

    public init(directory: String) { self.directory = directory }

    public var stateDirectory: String { "\(directory)/.passforge" }
    var journalPath: String { "\(stateDirectory)/journal.json" }
    var stagingDirectory: String { "\(stateDirectory)/staging" }
    /// The staging folder, relative to the output folder.
    var stagingFolder: String { ".passforge/staging" }

    public func passPath(type: String, serial: String) -> String { "v1/passes/\(type)/\(serial)" }

    /// One change to the tree, relative to the output folder.
    struct Operation: Codable, Sendable {
        enum Kind: String, Codable, Sendable {
            /// Move a staged file into place.
            case move
            /// Make `path` a hard link of `target`.
            case link
            case remove
        }
        var kind: Kind
        var path: String
        /// Staged file (move) or existing file (link).
        var source: String?
    }

    /// Everything a build will do, written before the first rename.
    struct Journal: Codable, Sendable {
        var operations: [Operation]
        /// The new build state, staged like every other file (encoded once: large states are slow to encode).
        var stagedState: String
        var downloadsCSV: String
    }

    /// Writes a staged file; staged files become visible only through `commit`.
    func stage(_ bytes: [UInt8], name: String) throws(AtomicFileSystem.Failure) -> String {
        let relative = ".passforge/staging/\(name)"
        try AtomicFileSystem.writeFile(bytes, to: "\(directory)/\(relative)", sync: false)
        return relative
    }

    func prepareStaging() throws(AtomicFileSystem.Failure) {
        try? FileManager.default.removeItem(atPath: stagingDirectory)
        try AtomicFileSystem.createDirectory(stagingDirectory)
    }

    /// Makes the build durable and visible. `stall` lets tests kill the process
    /// at a known point (PASSFORGE_TEST_STALL); it is never set in production.
    func commit(_ journal: Journal, stall: (String) -> Void = { _ in }) throws {
        try AtomicFileSystem.syncFileSystem(containing: stagingDirectory)
        stall("staged")
        try AtomicFileSystem.write(journal.json.serialized(), to: journalPath)
        try apply(journal, stall: stall)
    }

    /// Finishes a build that was killed after its journal was written.
    /// Returns true when there was one.
    public func rollForward() throws -> Bool {
        guard let data = FileManager.default.contents(atPath: journalPath) else {
            try? FileManager.default.removeItem(atPath: stagingDirectory)
            return false
        }
        guard let journal = try? Journal(json: JSONValue(parsing: Array(data))) else {
            // A journal is written atomically, so a damaged one was never committed.
            try AtomicFileSystem.remove(journalPath)
            try? FileManager.default.removeItem(atPath: stagingDirectory)
            return false
        }
        try apply(journal)
        return true
    }

    private func apply(_ journal: Journal, stall: (String) -> Void = { _ in }) throws {
        // Folders are made once each, not once per file: 10,000 passes share three.
        var folders = Set<String>()
        func makeFolder(of path: String) throws(AtomicFileSystem.Failure) {
            let folder = (path as NSString).deletingLastPathComponent
            if folders.insert(folder).inserted { try AtomicFileSystem.createDirectory(folder) }
        }
        for (index, operation) in journal.operations.enumerated() {
            if index == journal.operations.count / 2 { stall("applying") }
            let path = "\(directory)/\(operation.path)"
            switch operation.kind {
            case .move:
                try makeFolder(of: path)
                // False when an earlier, interrupted run of this journal moved it already.
                try AtomicFileSystem.renameIfPresent("\(directory)/\(operation.source!)", to: path)
            case .link:
                try makeFolder(of: path)
                try AtomicFileSystem.hardLink("\(directory)/\(operation.source!)", as: path, creatingFolder: false)
            case .remove:
                folders.insert((path as NSString).deletingLastPathComponent)
                try AtomicFileSystem.remove(path)
                removeEmptyParents(of: path)
            }
        }
        try AtomicFileSystem.write(Array(journal.downloadsCSV.utf8), to: "\(stateDirectory)/downloads.csv")
        for folder in folders.sorted() where FileManager.default.fileExists(atPath: folder) {
            try AtomicFileSystem.syncDirectory(folder)
        }
        let stagedState = "\(directory)/\(journal.stagedState)"
        if FileManager.default.fileExists(atPath: stagedState) {
            try AtomicFileSystem.rename(stagedState, to: BuildState.path(in: directory))
            try AtomicFileSystem.syncDirectory(stateDirectory)
        }
        try AtomicFileSystem.remove(journalPath)
        try? FileManager.default.removeItem(atPath: stagingDirectory)
    }

    /// Removes `v1/passes/<type>/` when its last pass is gone, never above `v1/`.
    private func removeEmptyParents(of path: String) {
        var folder = (path as NSString).deletingLastPathComponent
        let stop = ["\(directory)/v1/passes", "\(directory)/download", "\(directory)/by-token", "\(directory)/v1", directory]
        while !stop.contains(folder), let entries = try? FileManager.default.contentsOfDirectory(atPath: folder), entries.isEmpty {
            AtomicFileSystem.removeEmptyDirectory(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
    }
}

/// The journal as JSON, written and read through PassModel's JSON: a journal
/// lists every file of a build, and Foundation's coders take several times
/// longer for 40,000 operations. The format is what `Codable` gives.
extension OutputTree.Journal {
    struct DecodingFailure: Error {}

    var json: JSONValue {
        .object(JSONObject([
            ("downloadsCSV", .string(downloadsCSV)),
            ("operations", .array(operations.map { operation in
                var object = JSONObject([("kind", .string(operation.kind.rawValue)), ("path", .string(operation.path))])
                if let source = operation.source { object["source"] = .string(source) }
                return .object(object)
            })),
            ("stagedState", .string(stagedState)),
        ]))
    }

    init(json: JSONValue) throws {
        guard let csv = json["downloadsCSV"]?.stringValue, let staged = json["stagedState"]?.stringValue,
              let list = json["operations"]?.arrayValue else { throw DecodingFailure() }
        var operations: [OutputTree.Operation] = []
        operations.reserveCapacity(list.count)
        for item in list {
            guard let kind = item["kind"]?.stringValue.flatMap(OutputTree.Operation.Kind.init(rawValue:)),
                  let path = item["path"]?.stringValue else { throw DecodingFailure() }
            operations.append(OutputTree.Operation(kind: kind, path: path, source: item["source"]?.stringValue))
        }
        self.init(operations: operations, stagedState: staged, downloadsCSV: csv)
    }
}
