import PassModel
import WalletTree
import AtomicFiles
import Foundation
import PassContent
import PassPackage
import Synchronization

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
        /// The staged folders this worker knows are there.
        private var folders: Set<Substring> = []
        /// One signer per identity: a private copy of the key avoids lock
        /// contention inside OpenSSL's RSA blinding.
        private var signers: [String: CMSSigner] = [:]

        init(packager: ParallelPackager) {
            self.packager = packager
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
            for file in job.ownFiles { files.append(try PreparedPassFile(name: file.name, bytes: file.bytes, digest: kind.digest)) }
            let assembler = PassPackager(signer: signer)
            let bytes = switch kind {
            case .pass: try assembler.makePKPass(passJSON: job.passJSON, files: files, signingTime: packager.signingTime)
            case .order: try assembler.makeOrder(orderJSON: job.passJSON, files: files, signingTime: packager.signingTime)
            }
            var record = job.record
            record.updateTag = packager.updateTag
            record.etag = BuildState.etag(of: bytes)
            record.size = bytes.count
            let names = record.files.map { "\(packager.tree.directory)/\(TreeLayout.stagedPath(of: $0))" }
            try makeFolder(of: names[0])
            try AtomicFileSystem.createFile(bytes, at: names[0], modifiedAt: packager.updateTag)
            for name in names.dropFirst() {
                try makeFolder(of: name)
                try AtomicFileSystem.hardLink(names[0], as: name, creatingFolder: false)
            }
            return SignedPass(record: record)
        }

        private mutating func makeFolder(of path: String) throws(AtomicFileSystem.Failure) {
            let folder = TreeLayout.parentFolder(of: path)
            guard !folders.contains(folder) else { return }
            try AtomicFileSystem.createDirectory(String(folder))
            folders.insert(folder)
        }
    }

    func worker() -> Worker { Worker(packager: self) }
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
