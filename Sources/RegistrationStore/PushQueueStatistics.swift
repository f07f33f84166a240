/// The push queue at a glance, for metrics: how many pushes wait, and since when.
package struct PushQueueStatistics: Sendable, Equatable {
    package var pending: Int
    /// Seconds since 1970 at which the oldest pending push was queued; nil when none is.
    package var oldestQueuedAt: Double?

    package init(pending: Int, oldestQueuedAt: Double?) {
        self.pending = pending
        self.oldestQueuedAt = oldestQueuedAt
    }
}
