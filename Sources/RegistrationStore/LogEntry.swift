/// One device log message, as `DeviceLog.recentLogs` reads it.
public struct LogEntry: Sendable, Equatable {
    /// Seconds since 1970.
    public var receivedAt: Double
    public var message: String

    public init(receivedAt: Double, message: String) {
        self.receivedAt = receivedAt
        self.message = message
    }
}
