import AtomicFiles
import Foundation

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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFileSystem.write(Array(try encoder.encode(journal)), to: journalPath)
        try apply(journal, stall: stall)
    }

    /// Finishes a build that was killed after its journal was written.
    /// Returns true when there was one.
    public func rollForward() throws -> Bool {
        guard let data = FileManager.default.contents(atPath: journalPath) else {
            try? FileManager.default.removeItem(atPath: stagingDirectory)
            return false
        }
        guard let journal = try? JSONDecoder().decode(Journal.self, from: data) else {
            // A journal is written atomically, so a damaged one was never committed.
            try AtomicFileSystem.remove(journalPath)
            try? FileManager.default.removeItem(atPath: stagingDirectory)
            return false
        }
        try apply(journal)
        return true
    }

    private func apply(_ journal: Journal, stall: (String) -> Void = { _ in }) throws {
        var touchedDirectories = Set<String>()
        for (index, operation) in journal.operations.enumerated() {
            if index == journal.operations.count / 2 { stall("applying") }
            let path = "\(directory)/\(operation.path)"
            touchedDirectories.insert((path as NSString).deletingLastPathComponent)
            switch operation.kind {
            case .move:
                let source = "\(directory)/\(operation.source!)"
                // Already moved by an earlier, interrupted run of this journal.
                guard FileManager.default.fileExists(atPath: source) else { continue }
                try AtomicFileSystem.createDirectory((path as NSString).deletingLastPathComponent)
                try AtomicFileSystem.rename(source, to: path)
            case .link:
                try AtomicFileSystem.hardLink("\(directory)/\(operation.source!)", as: path)
            case .remove:
                try AtomicFileSystem.remove(path)
                removeEmptyParents(of: path)
            }
        }
        try AtomicFileSystem.write(Array(journal.downloadsCSV.utf8), to: "\(stateDirectory)/downloads.csv")
        for folder in touchedDirectories where FileManager.default.fileExists(atPath: folder) {
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
