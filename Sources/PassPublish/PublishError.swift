import AtomicFiles

/// Why a publish or a state fetch stopped, written for the person running it:
/// what failed and what to do.
package struct PublishError: Error, CustomStringConvertible, Sendable {
    package var description: String

    package init(_ description: String) { self.description = description }

    init(_ failure: AtomicFileSystem.Failure) { description = failure.description }
}
