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
    /// The worker's staging folder and the file's name in it (see `stagedPath`).
    private let worker: Int32, name: Int32

    init(record: BuildState.ItemRecord, worker: Int, name: Int) {
        self.record = record
        self.worker = Int32(worker)
        self.name = Int32(name)
    }

    /// The staged file, relative to the output folder.
    var stagedPath: String { ParallelPackager.stagedPath(worker: Int(worker), name: Int(name)) }
}

/// Signs and stages passes on the planner's worker threads, as soon as each
/// is rendered, so that render, sign and write run as one pipeline and the
/// bytes of a pass are dropped once they are on disk: memory stays flat
/// however many passes there are.
///
/// Each worker has its own signers and its own staging folder: two threads
/// creating entries in one folder contend for its lock in the kernel.
struct ParallelPackager: Sendable {
    let tree: OutputTree
    let signingTime: Date
    /// The update tag of the build: every staged file's modification time.
    let updateTag: Int64

    /// The state of one worker thread; used by that thread only.
    struct Worker {
        let packager: ParallelPackager
        let stagingFolder: String
        private var folderExists = false
        /// One signer per identity: a private copy of the key avoids lock
        /// contention inside OpenSSL's RSA blinding.
        private var signers: [String: CMSSigner] = [:]

        private let number: Int

        init(packager: ParallelPackager, number: Int) {
            self.packager = packager
            self.number = number
            stagingFolder = "\(OutputTree.stagingFolder)/\(number)"
        }

        /// Signs `job` and stages it as `<staging>/<worker>/<name>`, dated with the update tag.
        mutating func package(_ job: PackagingJob, name: Int) throws -> SignedPass {
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
            if !folderExists {
                try AtomicFileSystem.createDirectory("\(packager.tree.directory)/\(stagingFolder)")
                folderExists = true
            }
            let staged = ParallelPackager.stagedPath(worker: number, name: name)
            try AtomicFileSystem.createFile(bytes, at: "\(packager.tree.directory)/\(staged)", modifiedAt: packager.updateTag)
            var record = job.record
            record.updateTag = packager.updateTag
            record.etag = BuildState.etag(of: bytes)
            record.size = bytes.count
            return SignedPass(record: record, worker: number, name: name)
        }
    }

    func worker(_ number: Int) -> Worker { Worker(packager: self, number: number) }

    /// `<staging>/<worker>/<name>`, relative to the output folder.
    static func stagedPath(worker: Int, name: Int) -> String { "\(OutputTree.stagingFolder)/\(worker)/\(name)" }
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
