import AtomicFiles
import Foundation
import PassContent
import PassPackage
import Synchronization

/// A pass signed and staged, waiting for the build's commit.
struct SignedPass: Sendable {
    /// Its record, with the new update tag, ETag and size.
    var record: BuildState.PassRecord
    /// The staged file, relative to the output folder.
    var stagedPath: String
    /// The record as it goes into the state file, encoded by the worker that signed the pass.
    var encodedRecord: [UInt8]
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

        init(packager: ParallelPackager, number: Int) {
            self.packager = packager
            stagingFolder = "\(packager.tree.stagingFolder)/\(number)"
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
            var files = job.templateFiles
            for file in job.ownFiles { files.append(try PreparedPassFile(name: file.name, bytes: file.bytes)) }
            let bytes = try PassPackager(signer: signer).makePKPass(passJSON: job.passJSON, files: files, signingTime: packager.signingTime)
            if !folderExists {
                try AtomicFileSystem.createDirectory("\(packager.tree.directory)/\(stagingFolder)")
                folderExists = true
            }
            let staged = "\(stagingFolder)/\(name)"
            try AtomicFileSystem.createFile(bytes, at: "\(packager.tree.directory)/\(staged)", modifiedAt: packager.updateTag)
            var record = job.record
            record.updateTag = packager.updateTag
            record.etag = BuildState.etag(of: bytes)
            record.size = bytes.count
            return SignedPass(record: record, stagedPath: staged, encodedRecord: Self.exactCopy(record.json.serialized()))
        }

        /// The bytes in a buffer of their size: a serialized record's grew by doubling, and every
        /// pass's waits for the commit (at 100,000 passes, about 40 MB of slack).
        static func exactCopy(_ bytes: [UInt8]) -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: bytes)
            }
        }
    }

    func worker(_ number: Int) -> Worker { Worker(packager: self, number: number) }
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
