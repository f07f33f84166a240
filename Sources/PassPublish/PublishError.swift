import AtomicFiles

/// Why a publish or a state fetch stopped, written for the person running it:
/// what failed and what to do.
public struct PublishError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }

    init(_ failure: AtomicFileSystem.Failure) { description = failure.description }
}
