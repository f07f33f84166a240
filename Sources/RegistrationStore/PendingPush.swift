/// One APNs notification waiting to be delivered: "the passes of this type
/// on the devices using this token changed".
public struct PendingPush: Sendable, Hashable {
    public var pushToken: String
    /// The APNs topic: the pass type identifier.
    public var passTypeIdentifier: String
    /// Seconds since 1970.
    public var queuedAt: Double

    public init(pushToken: String, passTypeIdentifier: String, queuedAt: Double) {
        self.pushToken = pushToken
        self.passTypeIdentifier = passTypeIdentifier
        self.queuedAt = queuedAt
    }
}
