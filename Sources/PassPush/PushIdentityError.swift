/// A topic cannot be pushed with the configured certificate (none, the
/// development chain, one for another pass type, an expired one); its pushes
/// stay pending.
public struct PushIdentityError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
