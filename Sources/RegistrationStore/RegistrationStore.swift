/// Which device holds which pass, and the push token to reach it: the second
/// input of the output tree (DESIGN.md "The one idea").
///
/// The model is the one Apple's "Adding a Web Service to Update Passes"
/// suggests — a device table (library identifier + push token), and
/// registrations of (device, passTypeIdentifier, serialNumber) — without a
/// pass table: passes live in the build state.
///
/// Every implementation (SQLite now, PostgreSQL next) keeps the same rules:
/// - A registration is unique per (device, passTypeIdentifier, serialNumber),
///   enforced by the database, so concurrent duplicates make one row.
/// - A device exists exactly while it has registrations; its last
///   unregistration deletes it (Apple: "Delete the device entry from the
///   device table if the registration table has no more entries for that device").
/// - A change returns once it is durable, with the device's index for that
///   pass type as the same transaction saw it, and a revision that orders
///   changes of the same index in commit order.
/// - Arguments are taken as given: callers validate identifiers first.
public protocol RegistrationStore: Sendable {
    /// Registers a pass on a device, creating the device when needed and
    /// replacing its push token when it changed.
    func register(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) async throws -> RegistrationChange

    /// Removes a registration (nothing happens when there is none) and the
    /// device with its last registration.
    func unregister(device: String, passTypeIdentifier: String, serialNumber: String) async throws -> RegistrationChange

    /// The serial numbers of the passes of one type registered on a device,
    /// sorted; empty for an unknown device.
    func serialNumbers(device: String, passTypeIdentifier: String) async throws -> [String]

    /// The full index of one device and pass type, for writing it to disk.
    func index(device: String, passTypeIdentifier: String) async throws -> DeviceIndex

    /// The indices of every device holding any of `serialNumbers` of one
    /// pass type: what a build must rewrite when those passes change.
    func indices(holding passTypeIdentifier: String, serialNumbers: [String]) async throws -> [DeviceIndex]

    /// The devices (with their push tokens) that hold one pass: whom to push.
    func devices(holding passTypeIdentifier: String, serialNumber: String) async throws -> [RegisteredDevice]

    /// The distinct push tokens of the devices holding any of `serialNumbers`
    /// of one pass type. One push per token and topic tells a device to fetch
    /// every changed pass of that type.
    func pushTokens(passTypeIdentifier: String, serialNumbers: [String]) async throws -> [String]

    /// Deletes the devices using `pushToken`, with all their registrations
    /// (APNs answered 410 Unregistered or 400 BadDeviceToken). With
    /// `invalidSince` (seconds since 1970, from the 410's `timestamp`), a
    /// device that set this token after that moment keeps it: Apple says to
    /// delete only registrations older than the timestamp. Returns the
    /// indices it emptied, so their files can be removed.
    func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange]

    // MARK: Push queue (DESIGN.md "Push": a failed push is retried by the next run, never lost)

    /// The greatest update tag whose changes are already queued; nil before
    /// the first push run.
    func pushCursor() async throws -> Int64?

    /// In one transaction: queues one push per distinct (push token, pass
    /// type) of the devices holding any of `passes` — merged with pushes
    /// already pending, so a token is never told twice about one change —
    /// and moves the cursor to `cursor`. Returns the number of pushes pending.
    @discardableResult
    func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int

    /// Pushes queued and not yet delivered, oldest first.
    func pendingPushes(limit: Int) async throws -> [PendingPush]

    /// Removes delivered pushes (or pushes whose token turned out invalid) from the queue.
    func completePushes(_ pushes: [PendingPush]) async throws

    /// Runs `body` holding the store-wide push lock, so that two push runs
    /// (on one machine or many) never send the same change twice. Throws
    /// `PushLockBusy` when another run holds it.
    func withPushLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T

    /// Keeps device log messages (Apple's "Log a Message" endpoint), dropping
    /// the oldest beyond the store's bound.
    func appendLog(_ messages: [String], receivedAt: Double) async throws

    /// The newest log messages, newest first.
    func recentLogs(limit: Int) async throws -> [LogEntry]

    /// Counts, for health checks and tests.
    func statistics() async throws -> RegistrationStatistics

    /// Every registration with its device's push token, in (device, pass
    /// type, serial) order, `limit` at a time after `after`: for copying a
    /// store (`passforge migrate-store`).
    func exportRegistrations(after: ExportedRegistration?, limit: Int) async throws -> [ExportedRegistration]

    /// Whether other servers change the same registrations (a database
    /// server rather than a file of this process): then an index file must be
    /// written from a fresh read, not from what this process saw.
    var isShared: Bool { get }
}

extension RegistrationStore {
    public var isShared: Bool { false }
}

/// What `register` did; the web service answers 201 for `.created` and 200 otherwise
/// (Apple: "If the serial number is already registered for this device, return
/// HTTP status 200. If registration succeeds, return HTTP status 201.").
public enum RegistrationOutcome: Sendable, Equatable {
    /// A new registration.
    case created
    /// Already registered; the device's push token was replaced by a new one.
    case pushTokenReplaced
    /// Already registered with the same push token: nothing changed.
    case unchanged
    /// `unregister` removed the registration.
    case removed
    /// `unregister` found no such registration.
    case notRegistered

    /// Whether the registrations (and so the device's index) changed.
    public var changesIndex: Bool { self == .created || self == .removed }
}

/// The serial numbers of one pass type registered on one device.
public struct DeviceIndex: Sendable, Equatable, Hashable {
    public var device: String
    public var passTypeIdentifier: String
    /// Sorted; empty when the device holds no pass of this type.
    public var serialNumbers: [String]

    public init(device: String, passTypeIdentifier: String, serialNumbers: [String]) {
        self.device = device
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumbers = serialNumbers
    }
}

/// The result of a change, read inside the transaction that made it.
public struct RegistrationChange: Sendable, Equatable {
    public var outcome: RegistrationOutcome
    /// The device's index for the pass type after the change.
    public var index: DeviceIndex
    /// Increases with every committed change, in commit order for changes of
    /// the same index, so that index files written concurrently end up in the
    /// order of the changes (a writer skips a revision older than one it wrote).
    public var revision: Int64

    public init(outcome: RegistrationOutcome, index: DeviceIndex, revision: Int64) {
        self.outcome = outcome
        self.index = index
        self.revision = revision
    }
}

public struct RegisteredDevice: Sendable, Equatable, Hashable {
    public var device: String
    public var pushToken: String

    public init(device: String, pushToken: String) {
        self.device = device
        self.pushToken = pushToken
    }
}

public struct LogEntry: Sendable, Equatable {
    /// Seconds since 1970.
    public var receivedAt: Double
    public var message: String

    public init(receivedAt: Double, message: String) {
        self.receivedAt = receivedAt
        self.message = message
    }
}

public struct RegistrationStatistics: Sendable, Equatable {
    public var devices: Int
    public var registrations: Int
    public var logEntries: Int

    public init(devices: Int, registrations: Int, logEntries: Int) {
        self.devices = devices
        self.registrations = registrations
        self.logEntries = logEntries
    }
}

/// A pass, by its identity.
public struct PassReference: Sendable, Hashable {
    public var passTypeIdentifier: String
    public var serialNumber: String

    public init(passTypeIdentifier: String, serialNumber: String) {
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}

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

/// Another push run holds the store's push lock.
public struct PushLockBusy: Error, CustomStringConvertible, Sendable {
    public init() {}
    public var description: String {
        "another `passforge push` is running against this registration store; wait for it to finish (it pushes every change up to now)"
    }
}

/// One registration as `exportRegistrations` reads it.
public struct ExportedRegistration: Sendable, Equatable {
    public var device: String
    public var pushToken: String
    public var passTypeIdentifier: String
    public var serialNumber: String

    public init(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) {
        self.device = device
        self.pushToken = pushToken
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}
