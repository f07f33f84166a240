/// One APNs notification waiting to be delivered: "the passes of this type
/// on the devices using this token changed".
package struct PendingPush: Sendable, Hashable {
    package var pushToken: String
    /// The APNs topic: the pass type identifier.
    package var passTypeIdentifier: String
    /// Seconds since 1970.
    package var queuedAt: Double

    package init(pushToken: String, passTypeIdentifier: String, queuedAt: Double) {
        self.pushToken = pushToken
        self.passTypeIdentifier = passTypeIdentifier
        self.queuedAt = queuedAt
    }
}
