import Foundation

/// A micro-benchmark of pass signing, for a `bench` command or a script; not
/// a test (DESIGN.md: benchmarks are run by a command, not by timed tests).
public enum SigningBenchmark {
    public enum Workload: Sendable {
        /// Only the CMS signature over a manifest.
        case signature
        /// A whole `.pkpass`: manifest, signature and zip of a typical pass.
        case pkpass(PassPackager.Compression)
    }

    public struct Measurement: Sendable, CustomStringConvertible {
        public var threads: Int
        public var operations: Int
        public var seconds: Double

        /// Wall-clock time per operation, all threads together.
        public var millisecondsPerOperation: Double { seconds * 1000 / Double(operations) }
        /// Per-thread cost: what one operation occupies one core for.
        public var millisecondsPerOperationPerThread: Double { millisecondsPerOperation * Double(threads) }
        public var operationsPerSecond: Double { Double(operations) / seconds }

        public var description: String {
            String(format: "%d thread(s): %d ops in %.3f s = %.0f ops/s, %.3f ms/op per thread",
                   threads, operations, seconds, operationsPerSecond, millisecondsPerOperationPerThread)
        }
    }

    /// Runs `operationsPerThread` operations on each of `threads` threads,
    /// each thread with its own signer (`SigningIdentity.makeSigner()`), as
    /// a parallel build does.
    public static func run(
        identity: SigningIdentity,
        workload: Workload = .signature,
        threads: Int,
        operationsPerThread: Int
    ) throws -> Measurement {
        let passJSON = Array(#"{"formatVersion":1,"passTypeIdentifier":"pass.example","serialNumber":"1"}"#.utf8)
            + [UInt8](repeating: UInt8(ascii: " "), count: 1500)
        let files: [String: [UInt8]] = [
            "pass.json": passJSON,
            "icon.png": [UInt8](repeating: 7, count: 3000),
            "icon@2x.png": [UInt8](repeating: 8, count: 6000),
            "logo.png": [UInt8](repeating: 9, count: 5000),
        ]
        let manifest = Manifest(files: files).jsonBytes
        let signers = try (0..<threads).map { _ in try identity.makeSigner() }
        // Warm up each signer (first use sets up RSA blinding and caches).
        for signer in signers { _ = try signer.signature(forManifest: manifest) }

        let failures = FailureBox()
        let group = DispatchGroup()
        let start = ContinuousClock.now
        for signer in signers {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    switch workload {
                    case .signature:
                        for _ in 0..<operationsPerThread { _ = try signer.signature(forManifest: manifest) }
                    case .pkpass(let compression):
                        let packager = PassPackager(signer: signer, compression: compression)
                        for _ in 0..<operationsPerThread { _ = try packager.makePKPass(files: files) }
                    }
                } catch {
                    failures.record(error)
                }
            }
            thread.start()
        }
        group.wait()
        let elapsed = ContinuousClock.now - start
        if let error = failures.first { throw error }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Measurement(threads: threads, operations: threads * operationsPerThread, seconds: seconds)
    }

    /// `@unchecked Sendable`: the one mutable property is guarded by `lock`.
    private final class FailureBox: @unchecked Sendable {
        private let lock = NSLock()
        private var error: (any Error)?

        func record(_ error: any Error) {
            lock.withLock { if self.error == nil { self.error = error } }
        }

        var first: (any Error)? { lock.withLock { error } }
    }
}
