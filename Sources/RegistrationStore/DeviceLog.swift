/// The messages devices send to Apple's "Log a Message" endpoint, kept in
/// the registration store up to a bound.
package protocol DeviceLog: Sendable {
    /// Keeps device log messages, dropping the oldest beyond the store's bound.
    func appendLog(_ messages: [String], receivedAt: Double) async throws

    /// The newest log messages, newest first.
    func recentLogs(limit: Int) async throws -> [LogEntry]
}

extension DeviceLog {
    /// Device log messages a store keeps unless told otherwise; older ones are dropped.
    package static var defaultLogLimit: Int { 10_000 }
}
