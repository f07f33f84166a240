/// One device log message, as `DeviceLog.recentLogs` reads it.
package struct LogEntry: Sendable, Equatable {
    /// Seconds since 1970.
    package var receivedAt: Double
    package var message: String

    package init(receivedAt: Double, message: String) {
        self.receivedAt = receivedAt
        self.message = message
    }
}
