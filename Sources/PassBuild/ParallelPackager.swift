import AtomicFiles
import Foundation
import PassContent
import PassModel
import PassPackage
import Synchronization
import WalletTree

/// A pass signed and staged, waiting for the build's commit.
///
/// A class: every signed pass waits for the commit, and passing a reference from the worker's
/// result to the plan and on to the new state copies no record (at 100,000 passes, tens of MB).
final class SignedPass: Sendable {
    /// Its record, with the new update tag, ETag and size.
    let record: BuildState.ItemRecord

    init(record: BuildState.ItemRecord) {
        self.record = record
    }

    /// The staged file, relative to the output folder: `TreeLayout.stagedPath(of:)` its path; its other
    /// names (`record.files`) are staged beside it as hard links.
    var stagedPath: String { TreeLayout.stagedPath(of: record.path) }
}

/// Signs and stages passes on the planner's worker threads, as soon as each
/// is rendered, so that render, sign and write run as one pipeline and the
/// bytes of a pass are dropped once they are on disk: memory stays flat
/// however many passes there are.
///
/// Each pass is staged under its own path in the tree (`TreeLayout.stagedTreeFolder`), with its other
/// names (token-keyed name, download link) as hard links made here, on every core: the commit then
/// only renames, and moves a folder the output does not have yet in one rename.
struct ParallelPackager: Sendable {
    let tree: OutputTree
    let signingTime: Date
    /// The update tag of the build: every staged file's modification time.
    let updateTag: Int64

    /// The state of one worker thread; used by that thread only.
    struct Worker {
        let packager: ParallelPackager
        private let number: Int
        /// How this worker makes a file: in its own folder, `staging/<worker>`, then moved into
        /// the staged tree. Two threads creating files in one folder contend for its lock in the kernel for
        /// as long as the file system takes to find a free inode (on ext4 right after mass deletions, longer
        /// than a signature, spent spinning); a move or a link only writes an entry, quickly. On tmpfs
        /// (`OpenFolder.isInMemory`) making a file takes no such search, and it is made in place.
        private var creation: Creation?
        private var created = 0

        /// Where this worker makes each file: chosen once, by the staged tree's file system.
        private enum Creation {
            case inPlace
            case inOwnFolder(OpenFolder)
        }
        /// The staged tree's folders this worker holds open, by their path in the tree.
        private var treeFolders: [Substring: OpenFolder] = [:]
        /// One signer per identity: a private copy of the key avoids lock
        /// contention inside OpenSSL's RSA blinding.
        private var signers: [String: CMSSigner] = [:]

        init(packager: ParallelPackager, number: Int) {
            self.packager = packager
            self.number = number
        }

        /// Signs `job` and stages it with its other names, dated with the update tag.
        mutating func package(_ job: PackagingJob) throws -> SignedPass {
            let signer: CMSSigner
            if let cached = signers[job.identity.fingerprint] {
                signer = cached
            } else {
                signer = try job.identity.identity.makeSigner()
                signers[job.identity.fingerprint] = signer
            }
            let kind = job.record.kind
            var files = job.templateFiles
            for file in job.ownFiles {
                files.append(try PreparedPassFile(name: file.name, bytes: file.bytes, digest: kind.digest))
            }
            let assembler = PassPackager(signer: signer)
            let bytes =
                switch kind {
                case .pass:
                    try assembler.makePKPass(passJSON: job.passJSON, files: files, signingTime: packager.signingTime)
                case .order:
                    try assembler.makeOrder(orderJSON: job.passJSON, files: files, signingTime: packager.signingTime)
                }
            var record = job.record
            record.updateTag = packager.updateTag
            record.etag = BuildState.etag(of: bytes)
            record.size = bytes.count
            try stage(bytes, as: record.files)
            return SignedPass(record: record)
        }

        /// Creates the file as the first of `names` in the staged tree (on a disk file system: in this
        /// worker's own folder, then moved there) and links the others to it.
        private mutating func stage(_ bytes: [UInt8], as names: [String]) throws(AtomicFileSystem.Failure) {
            let itemFolder = try treeFolder(of: names[0])
            let itemName = String(TreeLayout.fileName(of: names[0]))
            if creation == nil { creation = itemFolder.isInMemory ? .inPlace : .inOwnFolder(try openOwnFolder()) }
            switch creation! {
            case .inPlace:
                try itemFolder.createFile(bytes, named: itemName, modifiedAt: packager.updateTag)
            case .inOwnFolder(let own):
                let created = String(self.created)
                self.created += 1
                try own.createFile(bytes, named: created, modifiedAt: packager.updateTag)
                try own.moveFile(named: created, to: itemFolder, as: itemName)
            }
            for name in names.dropFirst() {
                try itemFolder.linkFile(
                    named: itemName, to: try treeFolder(of: name), as: String(TreeLayout.fileName(of: name)))
            }
        }

        static let openTreeFolders = 32

        private func openOwnFolder() throws(AtomicFileSystem.Failure) -> OpenFolder {
            let path = packager.tree.path("\(TreeLayout.stagingFolder)/\(number)")
            try AtomicFileSystem.createDirectory(path)
            return try OpenFolder(path)
        }

        private mutating func treeFolder(of path: String) throws(AtomicFileSystem.Failure) -> OpenFolder {
            let folder = TreeLayout.parentFolder(of: path)
            if let open = treeFolders[folder] { return open }
            // Four folders a type (item, token name, two download links) stay open; a project of many types
            // starts again rather than hold a descriptor for each on every worker.
            if treeFolders.count >= Self.openTreeFolders { treeFolders.removeAll(keepingCapacity: true) }
            let staged = packager.tree.path(TreeLayout.stagedPath(of: String(folder)))
            try AtomicFileSystem.createDirectory(staged)
            let open = try OpenFolder(staged)
            treeFolders[folder] = open
            return open
        }
    }

}

/// Fixed slots written by exactly one worker each, read after all finish.
final class ResultSlots<Value: Sendable>: Sendable {
    private let storage: Mutex<[Value?]>

    init(count: Int) { storage = Mutex(Array(repeating: nil, count: count)) }

    init(values: [Value]) { storage = Mutex(values.map { $0 }) }

    var count: Int { storage.withLock { $0.count } }

    subscript(index: Int) -> Value? {
        get { storage.withLock { $0[index] } }
        set { storage.withLock { $0[index] = newValue } }
    }

    /// Takes the value out of its slot, so that its memory goes as soon as it is used.
    func take(_ index: Int) -> Value? {
        storage.withLock { slots in
            defer { slots[index] = nil }
            return slots[index]
        }
    }
}
