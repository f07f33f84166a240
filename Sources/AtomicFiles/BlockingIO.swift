import Dispatch

/// Runs file work that blocks (fsync) on Dispatch's threads, so that it
/// never holds one of the few threads of Swift's cooperative pool, which
/// serve every request.
package enum BlockingIO {
    private static let queue = DispatchQueue(label: "passforge.blocking-io", attributes: .concurrent)

    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
