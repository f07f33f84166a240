package import AtomicFiles
import ConcurrencySupport
import Foundation
package import PassModel
import Synchronization

/// The output folder — `v1/passes/<type>/<serial>`, `download/…`, the device
/// indices and `.passforge/state.json` — and the one way it changes: stage every new
/// file, flush them, write a journal, move them into place, commit the state.
///
/// A build killed before the journal is written leaves the previous tree as
/// it was; one killed after it is finished by the next build (roll forward).
package struct OutputTree: Sendable {
    package var directory: String

    package init(directory: String) { self.directory = directory }

    /// `relative` (a path of `TreeLayout`, or of the journal) in the output folder: the one place the two are joined.
    package func path(_ relative: some StringProtocol) -> String { "\(directory)/\(relative)" }

    package var stateDirectory: String { path(TreeLayout.stateFolder) }
    package var journalPath: String { path(TreeLayout.journalPath) }
    package var stagingDirectory: String { path(TreeLayout.stagingFolder) }
    /// The staging folder, relative to the output folder.
    package static let stagingFolder = TreeLayout.stagingFolder
    package var stagingFolder: String { Self.stagingFolder }

    /// One change to the tree, relative to the output folder.
    package struct Operation: Codable, Sendable {
        package enum Kind: String, Codable, Sendable {
            /// Move a staged file into place.
            case move
            /// Make `path` a hard link of `target`.
            case link
            case remove
            /// Move a staged folder into place whole, where the output has none (`TreeLayout.isBuildOwnedFolder`).
            case moveFolder
        }
        package var kind: Kind
        package var path: String
        /// Staged file (move) or existing file (link).
        package var source: String?

        package init(kind: Kind, path: String, source: String? = nil) {
            (self.kind, self.path, self.source) = (kind, path, source)
        }
    }

    /// Everything a build will do, written before the first rename.
    package struct Journal: Codable, Sendable {
        package var operations: [Operation]
        /// The new build state, staged like every other file (encoded once: large states are slow to encode).
        package var stagedState: String
        /// The new downloads.csv, staged too: a journal lists operations, not file contents.
        /// Nil only in a journal written before it was staged, which holds it inline.
        package var stagedDownloadsList: String?
        /// downloads.csv inline, as journals written before it was staged held it: only read, to finish such a build.
        package var inlineDownloadsList: String?

        package init(
            operations: [Operation], stagedState: String, stagedDownloadsList: String?,
            inlineDownloadsList: String? = nil
        ) {
            (self.operations, self.stagedState, self.stagedDownloadsList, self.inlineDownloadsList) =
                (operations, stagedState, stagedDownloadsList, inlineDownloadsList)
        }
    }

    /// Writes a staged file; staged files become visible only through `commit`.
    package func stage(_ bytes: [UInt8], name: String) throws(AtomicFileSystem.Failure) -> String {
        let relative = "\(TreeLayout.stagingFolder)/\(name)"
        try AtomicFileSystem.writeFile(bytes, to: path(relative), sync: false)
        return relative
    }

    package func prepareStaging() throws(AtomicFileSystem.Failure) {
        AtomicFileSystem.removeTree(stagingDirectory)
        try AtomicFileSystem.createDirectory(stagingDirectory)
    }

    /// Makes the build durable and visible. `checkpoint` is called after each
    /// step ("staged", "journaled", "applying" half-way, "applied"), on this thread while no other
    /// writes: tests copy the tree there, which is what a kill at that point leaves (`Checkpoints`),
    /// and the build times its phases.
    package func commit(_ journal: Journal, jobs: Int, checkpoint: (String) -> Void = { _ in }) throws {
        try syncStaged()
        checkpoint("staged")
        try AtomicFileSystem.write(to: journalPath) { writer throws(AtomicFileSystem.Failure) in
            try journal.encode { chunk throws(AtomicFileSystem.Failure) in try writer.append(chunk) }
        }
        checkpoint("journaled")
        try apply(journal, jobs: jobs, stall: checkpoint)
        checkpoint("applied")
    }

    /// Makes every staged file durable: one syncfs for many files, an fsync
    /// each for a few (syncfs also waits for every other dirty file of the
    /// file system, which on a busy machine takes longer than a few fsyncs).
    private func syncStaged() throws(AtomicFileSystem.Failure) {
        var files: [String] = []
        var folders = [stagingDirectory]
        var next = 0
        while next < folders.count, files.count <= 64 {
            for entry in AtomicFileSystem.directoryEntries(folders[next]) ?? [] {
                let path = "\(folders[next])/\(entry.name)"
                if entry.isDirectory { folders.append(path) } else { files.append(path) }
            }
            next += 1
        }
        guard files.count <= 64 else { return try AtomicFileSystem.syncFileSystem(containing: stagingDirectory) }
        for file in files { try AtomicFileSystem.syncFile(file) }
        for folder in folders + [stateDirectory] { try AtomicFileSystem.syncDirectory(folder) }
    }

    /// Finishes a build that was killed after its journal was written.
    /// Returns true when there was one.
    package func rollForward() throws -> Bool {
        guard let data = AtomicFileSystem.readFile(journalPath) else {
            AtomicFileSystem.removeTree(stagingDirectory)
            return false
        }
        guard let journal = try? Journal(json: JSONValue(parsing: data)) else {
            // A journal is written atomically, so a damaged one was never committed.
            try AtomicFileSystem.remove(journalPath)
            AtomicFileSystem.removeTree(stagingDirectory)
            return false
        }
        try Self.check(journal, path: journalPath)
        // A journal read back may have been changed since this build wrote it: every file a folder move would
        // place is checked as a file move's path is (a build's own commit moves only folders its workers filled).
        for operation in journal.operations where operation.kind == .moveFolder {
            try checkStagedFolder(operation.source!, as: operation.path)
        }
        try apply(journal, checked: true)
        return true
    }

    /// Every entry of the staged folder `source` is a plain file whose path under `path` is the build's, or a
    /// folder that is the build's (`TreeLayout.isBuildOwnedFolder`) and holds only such entries; no link.
    private func checkStagedFolder(_ source: String, as path: String) throws {
        guard let entries = AtomicFileSystem.directoryEntries(self.path(source)) else { return }  // moved already
        for entry in entries {
            let target = "\(path)/\(entry.name)"
            let staged = "\(source)/\(entry.name)"
            switch AtomicFileSystem.entryKind(self.path(staged)) {
            case .regularFile? where TreeLayout.isBuildOwned(target): continue
            case .directory? where TreeLayout.isBuildOwnedFolder(target): try checkStagedFolder(staged, as: target)
            default:
                throw BuildError(
                    .refused,
                    "refusing to move \(BuildState.quoted(source)) to \(BuildState.quoted(path)) (in \(journalPath)): it holds \(BuildState.quoted(staged)), which is not a pass, token link or download of the output tree; the staged files are damaged — delete the output folder's .passforge/ and build again"
                )
            }
        }
    }

    /// Applies the operations in order, except that a run of links or of
    /// moves is spread over threads by target folder: the operations of a
    /// run never depend on one another, and one thread per folder never
    /// waits for another's lock on that folder. A build's journal lists the
    /// moves of whole folders first, so that the moves and links after them
    /// find their folders.
    private func apply(
        _ journal: Journal, checked: Bool = false, jobs: Int = ProcessInfo.processInfo.activeProcessorCount,
        stall: (String) -> Void = { _ in }
    ) throws {
        if !checked { try Self.check(journal, path: journalPath) }
        var folders = Set<String>()
        var start = 0
        var runs = 0
        let operations = journal.operations
        while start < operations.count {
            let kind = operations[start].kind
            var end = start + 1
            while end < operations.count, operations[end].kind == kind { end += 1 }
            if runs == 1 { stall("applying") }
            runs += 1
            if kind == .remove {
                for operation in operations[start..<end] {
                    let path = self.path(operation.path)
                    folders.insert(String(TreeLayout.parentFolder(of: path)))
                    try AtomicFileSystem.remove(path)
                    removeEmptyParents(of: path)
                }
            } else if kind == .moveFolder {
                for operation in operations[start..<end] {
                    let path = self.path(operation.path)
                    let parent = String(TreeLayout.parentFolder(of: path))
                    try AtomicFileSystem.createDirectory(parent)
                    folders.insert(parent)
                    try AtomicFileSystem.renameIfPresent(self.path(operation.source!), to: path)
                }
            } else {
                let groups = Dictionary(grouping: operations[start..<end]) { TreeLayout.parentFolder(of: $0.path) }
                    .sorted { $0.key < $1.key }
                folders.formUnion(groups.map { path($0.key) })
                try applyInParallel(groups.map(\.value), jobs: jobs)
            }
            start = end
        }
        if runs <= 1 { stall("applying") }
        if let inline = journal.inlineDownloadsList {
            try AtomicFileSystem.write(Array(inline.utf8), to: path(TreeLayout.downloadsListPath))
        }
        for folder in folders.sorted() where AtomicFileSystem.exists(folder) {
            try AtomicFileSystem.syncDirectory(folder)
        }
        // downloads.csv, then the state, last: what the state lists is in place before it is.
        if let staged = journal.stagedDownloadsList {
            _ = try AtomicFileSystem.renameIfPresent(path(staged), to: path(TreeLayout.downloadsListPath))
        }
        if try AtomicFileSystem.renameIfPresent(path(journal.stagedState), to: BuildState.path(in: directory)) {
            try AtomicFileSystem.syncDirectory(stateDirectory)
        }
        try AtomicFileSystem.remove(journalPath)
        AtomicFileSystem.removeTree(stagingDirectory)
    }

    /// Every operation stays in the build-owned part of the tree (`TreeLayout`): a file is removed, moved or
    /// linked there only, from a staged file or another build-owned one; besides, the staged bundle list moves
    /// to `.passforge/bundles.json`. Checked whole before the first operation, so that a state or bundle list
    /// that names another path (damaged, or taken from a hostile destination) changes nothing.
    package static func check(_ journal: Journal, path journalPath: String) throws {
        func refuse(_ operation: Operation) -> BuildError {
            let source = operation.source.map { " from \(BuildState.quoted($0))" } ?? ""
            return BuildError(
                .refused,
                "refusing to \(operation.kind.rawValue) \(BuildState.quoted(operation.path))\(source) (in \(journalPath)): it is not a pass, token link, download or bundle path of the output tree; the build state or bundles.json that lists it is damaged — delete the output folder's .passforge/ and build again"
            )
        }
        if let list = journal.stagedDownloadsList, !isStaged(list) {
            throw BuildError(
                .refused,
                "\(journalPath) stages downloads.csv at \(BuildState.quoted(list)), outside \(stagingFolder)/; delete it and build again"
            )
        }
        guard isStaged(journal.stagedState) else {
            throw BuildError(
                .refused,
                "\(journalPath) stages the build state at \(BuildState.quoted(journal.stagedState)), outside \(stagingFolder)/; delete it and build again"
            )
        }
        for operation in journal.operations {
            switch operation.kind {
            case .remove:
                // The landing page list goes when the pages are switched off (`landingPages: enabled: false`).
                guard TreeLayout.isBuildOwned(operation.path) || operation.path == TreeLayout.landingPageListPath
                else { throw refuse(operation) }
            case .move, .link:
                guard
                    TreeLayout.isBuildOwned(operation.path) || operation.path == BundleList.path
                        || operation.path == TreeLayout.landingPageListPath,
                    let source = operation.source, isStaged(source) || TreeLayout.isBuildOwned(source)
                else { throw refuse(operation) }
            case .moveFolder:
                // Only the folder staged for that very path: what it holds is checked before it moves (`checkStagedFolder`).
                guard TreeLayout.isBuildOwnedFolder(operation.path),
                    operation.source == TreeLayout.stagedPath(of: operation.path)
                else { throw refuse(operation) }
            }
        }
    }

    /// A path under `.passforge/staging/` that does not climb out of it.
    package static func isStaged(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            let prefix = (TreeLayout.stagingFolder + "/").utf8
            guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return false }
            // Each name after it: not empty, not `.` or `..`, no control character.
            var start = prefix.count
            for index in prefix.count...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                let length = index - start
                if length == 0
                    || (bytes[start] == UInt8(ascii: ".")
                        && (length == 1 || (length == 2 && bytes[start + 1] == UInt8(ascii: "."))))
                {
                    return false
                }
                start = index + 1
            }
            for byte in bytes where byte < 0x20 || byte == 0x7F { return false }
            return true
        }
    }

    /// Moves and links, one folder's operations per thread at a time. An
    /// operation whose source is gone while its target is there was done by
    /// an earlier, interrupted run of the same journal.
    private func applyInParallel(_ groups: [[Operation]], jobs: Int) throws {
        let failure = Mutex<AtomicFileSystem.Failure?>(nil)
        let tree = self
        ParallelLoop.run(count: groups.count, jobs: jobs) { _, next in
            while let index = next() {
                do throws(AtomicFileSystem.Failure) {
                    let group = groups[index]
                    try AtomicFileSystem.createDirectory(String(TreeLayout.parentFolder(of: tree.path(group[0].path))))
                    for operation in group {
                        let source = tree.path(operation.source!)
                        let path = tree.path(operation.path)
                        if operation.kind == .move {
                            try AtomicFileSystem.renameIfPresent(source, to: path)
                        } else {
                            try AtomicFileSystem.hardLinkIfPresent(source, as: path)
                        }
                    }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                    return
                }
            }
        }
        if let failure = failure.withLock({ $0 }) { throw failure }
    }

    /// Removes `v1/passes/<type>/` (or `v1/orders/<type>/`, `by-token/<type>/`…) when its last file is gone,
    /// never a top folder of the tree.
    private func removeEmptyParents(of path: String) {
        var folder = String(TreeLayout.parentFolder(of: path))
        let stop = TreeLayout.topFolders.map { self.path($0) } + [directory]
        while !stop.contains(folder), let entries = AtomicFileSystem.directoryEntries(folder), entries.isEmpty {
            AtomicFileSystem.removeEmptyDirectory(folder)
            folder = String(TreeLayout.parentFolder(of: folder))
        }
    }
}

/// The journal as JSON, written and read through PassModel's JSON: a journal
/// lists every file of a build, and Foundation's coders take several times
/// longer for 40,000 operations. The format is what `Codable` gives.
extension OutputTree.Journal {
    package var json: JSONValue {
        .object(
            JSONObject([
                (
                    "operations",
                    .array(
                        operations.map { operation in
                            var object = JSONObject([
                                ("kind", .string(operation.kind.rawValue)), ("path", .string(operation.path)),
                            ])
                            if let source = operation.source { object["source"] = .string(source) }
                            return .object(object)
                        })
                ),
                ("stagedDownloadsList", stagedDownloadsList.map(JSONValue.string) ?? .null),
                ("stagedState", .string(stagedState)),
            ]))
    }

    /// `json.serialized()`, written straight to bytes: no tree of 400,000 operations in memory.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode { chunk in out += chunk }
        return out
    }

    /// `encoded()` in chunks of about a megabyte, handed to `emit` in order: at 100,000 passes a
    /// journal is some 40 MB, which need not be in memory at once.
    package func encode<Failure: Error>(_ emit: ([UInt8]) throws(Failure) -> Void) throws(Failure) {
        let chunkSize = 1 << 20
        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + 4096)
        out += #"{"operations":["#.utf8
        for (index, operation) in operations.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"kind":""#.utf8
            out += operation.kind.rawValue.utf8
            out += #"","path":"#.utf8
            BuildStateEncoding.appendString(operation.path, to: &out)
            if let source = operation.source {
                out += #","source":"#.utf8
                BuildStateEncoding.appendString(source, to: &out)
            }
            out.append(UInt8(ascii: "}"))
            if out.count >= chunkSize {
                try emit(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out += #"],"stagedDownloadsList":"#.utf8
        out += (stagedDownloadsList.map(JSONValue.string) ?? .null).serialized()
        out += #","stagedState":"#.utf8
        out += JSONValue.string(stagedState).serialized()
        out.append(UInt8(ascii: "}"))
        try emit(out)
    }

    package init(json: JSONValue) throws {
        let inline = json["downloadsCSV"]?.stringValue
        let stagedList = json["stagedDownloadsList"]?.stringValue
        guard let staged = json["stagedState"]?.stringValue, let list = json["operations"]?.arrayValue,
            stagedList != nil || inline != nil
        else { throw BuildError(.unreadable, "the journal is not a passforge journal") }
        var operations: [OutputTree.Operation] = []
        operations.reserveCapacity(list.count)
        for item in list {
            guard let kind = item["kind"]?.stringValue.flatMap(OutputTree.Operation.Kind.init(rawValue:)),
                let path = item["path"]?.stringValue
            else { throw BuildError(.unreadable, "the journal is not a passforge journal") }
            operations.append(OutputTree.Operation(kind: kind, path: path, source: item["source"]?.stringValue))
        }
        self.init(
            operations: operations, stagedState: staged, stagedDownloadsList: stagedList, inlineDownloadsList: inline)
    }
}
