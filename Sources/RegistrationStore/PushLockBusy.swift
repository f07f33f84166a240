/// Another push run holds the store's push lock.
public struct PushLockBusy: Error, CustomStringConvertible, Sendable {
    public init() {}
    public var description: String {
        "another `passforge push` is running against this registration store; wait for it to finish (it pushes every change up to now)"
    }
}
