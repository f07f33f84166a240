import AtomicFiles
import Crypto
import Dispatch
import Foundation
import PassPackage
import Synchronization

/// Packages and signs passes on every core, staging each result at once so
/// that memory stays flat however many passes there are.
struct ParallelPackager {
    struct Output: Sendable {
        var stagedPath: String
        var etag: String
        var size: Int
    }

    let tree: OutputTree
    let jobs: Int
    let signingTime: Date

    func package(_ work: [PackagingJob], progress: @escaping @Sendable (Int) -> Void) throws -> [Output] {
        let results = ResultSlots<Result<Output, Error>>(count: work.count)
        let next = Counter()
        let workers = min(jobs, max(1, work.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            // One signer per worker and identity: a private copy of the key
            // avoids lock contention inside OpenSSL's RSA blinding.
            var signers: [String: CMSSigner] = [:]
            while true {
                let index = next.increment() - 1
                guard index < work.count else { return }
                let job = work[index]
                results[index] = Result {
                    let signer: CMSSigner
                    if let cached = signers[job.identity.fingerprint] {
                        signer = cached
                    } else {
                        signer = try job.identity.identity.makeSigner()
                        signers[job.identity.fingerprint] = signer
                    }
                    let bytes = try PassPackager(signer: signer).makePKPass(files: job.files, signingTime: signingTime)
                    let staged = try tree.stage(bytes, name: "\(index).pkpass")
                    return Output(stagedPath: staged, etag: Self.etag(of: bytes), size: bytes.count)
                }
                progress(index)
            }
        }
        return try results.values.map { try $0!.get() }
    }

    static func etag(of bytes: [UInt8]) -> String { BuildState.etag(of: bytes) }
}

/// Fixed slots written by exactly one worker each, read after all finish.
final class ResultSlots<Value: Sendable>: Sendable {
    private let storage: Mutex<[Value?]>

    init(count: Int) { storage = Mutex(Array(repeating: nil, count: count)) }

    subscript(index: Int) -> Value? {
        get { storage.withLock { $0[index] } }
        set { storage.withLock { $0[index] = newValue } }
    }

    var values: [Value?] { storage.withLock { $0 } }
}
