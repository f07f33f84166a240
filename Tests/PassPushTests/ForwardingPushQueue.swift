import RegistrationStore
import SQLiteRegistrationStore

/// A push queue in front of the real store: every call goes to `store`
/// unless the conforming test type implements it itself (to record or hold it).
protocol ForwardingPushQueue: PushQueue {
    var store: SQLiteRegistrationStore { get }
}

extension ForwardingPushQueue {
    func pushCursor() async throws -> Int64? { try await store.pushCursor() }
    func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int {
        try await store.queuePushes(for: passes, advancingCursorTo: cursor)
    }
    func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String] {
        try await store.pushTokens(passTypeIdentifier: passTypeIdentifier, serialNumbers: serialNumbers)
    }
    func pendingPushes(limit: Int) async throws -> [PendingPush] { try await store.pendingPushes(limit: limit) }
    func pushQueueStatistics() async throws -> PushQueueStatistics { try await store.pushQueueStatistics() }
    func completePushes(_ pushes: [PendingPush]) async throws { try await store.completePushes(pushes) }
    func withPushLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await store.withPushLock(body)
    }
    func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange] {
        try await store.deleteDevices(pushToken: pushToken, invalidSince: invalidSince)
    }
}
