/// A topic cannot be pushed with the configured certificate (none, the
/// development chain, one for another pass type, an expired one); its pushes
/// stay pending.
package struct PushIdentityError: Error, CustomStringConvertible, Sendable {
    package var description: String
    init(_ description: String) { self.description = description }
}
