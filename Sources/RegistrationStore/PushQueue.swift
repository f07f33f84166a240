/// The pushes still to send, kept in the registration store: a failed push
/// is retried by the next push run, never lost.
package protocol PushQueue: Sendable {
    /// The greatest update tag whose changes are already queued; nil before
    /// the first push run.
    func pushCursor() async throws -> Int64?

    /// In one transaction: queues one push per distinct (push token, pass
    /// type) of the devices holding any of `passes` — merged with pushes
    /// already pending, so a token is never told twice about one change —
    /// and moves the cursor to `cursor`. Returns the number of pushes pending.
    @discardableResult
    func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int

    /// The distinct push tokens of the devices holding any of `serialNumbers`
    /// of one pass type, sorted: the pushes `queuePushes` would add (a dry run).
    /// One push per token and topic tells a device to fetch every changed
    /// pass of that type.
    func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String]

    /// Pushes queued and not yet delivered, oldest first.
    func pendingPushes(limit: Int) async throws -> [PendingPush]

    /// How many pushes are pending, and the age of the oldest.
    func pushQueueStatistics() async throws -> PushQueueStatistics

    /// Removes delivered pushes (or pushes whose token turned out invalid) from the queue.
    func completePushes(_ pushes: [PendingPush]) async throws

    /// Runs `body` holding the store-wide push lock, so that two push runs
    /// (on one machine or many) never send the same change twice. Throws
    /// `RegistrationStoreError.pushLockBusy` when another run holds it.
    func withPushLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T

    /// Deletes the devices using `pushToken`, with all their registrations
    /// (APNs answered 410 Unregistered or 400 BadDeviceToken). With
    /// `invalidSince` (seconds since 1970, from the 410's `timestamp`), a
    /// device that set this token after that moment keeps it: Apple says to
    /// delete only registrations older than the timestamp. Returns the
    /// indices it emptied, so their files can be removed.
    func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange]
}
