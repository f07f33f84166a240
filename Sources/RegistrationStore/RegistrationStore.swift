/// Which device holds which pass, and the push token to reach it: with the
/// build state, what the output tree's device indices are made from.
///
/// The model is the one Apple's "Adding a Web Service to Update Passes"
/// suggests — a device table (library identifier + push token), and
/// registrations of (device, passTypeIdentifier, serialNumber) — without a
/// pass table: passes live in the build state.
///
/// Every implementation (an SQLite file, a PostgreSQL server) keeps the same rules:
/// - A registration is unique per (device, passTypeIdentifier, serialNumber),
///   enforced by the database, so concurrent duplicates make one row.
/// - A device exists exactly while it has registrations; its last
///   unregistration deletes it (Apple: "Delete the device entry from the
///   device table if the registration table has no more entries for that device").
/// - A change returns once it is durable, with the device's index for that
///   pass type as the same transaction saw it, and a revision that orders
///   changes of the same index in commit order.
/// - Arguments are taken as given: callers validate identifiers first.
///
/// The push queue, the device log and the export are separate protocols
/// (`PushQueue`, `DeviceLog`, `RegistrationExport`, `OfferClaimStore`); a store implements all
/// of them (`RegistrationDatabase`).
package protocol RegistrationStore: Sendable {
    /// Registers a pass on a device, creating the device when needed and
    /// replacing its push token when it changed.
    func register(device: String, pushToken: String, passTypeIdentifier: String, serialNumber: String) async throws
        -> RegistrationChange

    /// Removes a registration (nothing happens when there is none) and the
    /// device with its last registration.
    func unregister(device: String, passTypeIdentifier: String, serialNumber: String) async throws -> RegistrationChange

    /// The serial numbers of the passes of one type registered on a device,
    /// sorted; empty for an unknown device.
    func serialNumbers(device: String, passTypeIdentifier: String) async throws -> [String]

    /// The full index of one device and pass type, for writing it to disk.
    func index(device: String, passTypeIdentifier: String) async throws -> DeviceIndex

    /// The full indices of several (device, pass type) pairs, in their order.
    func indices(of keys: [(device: String, passTypeIdentifier: String)]) async throws -> [DeviceIndex]

    /// The indices of every device holding any of `serialNumbers` of one
    /// pass type: what a build must rewrite when those passes change.
    func indices(holding passTypeIdentifier: String, serialNumbers: [String]) async throws -> [DeviceIndex]

    /// Counts, for health checks and tests.
    func statistics() async throws -> RegistrationStatistics

    /// Whether other servers change the same registrations (a database
    /// server rather than a file of this process): then an index file must be
    /// written from a fresh read, not from what this process saw.
    var isShared: Bool { get }
}

extension RegistrationStore {
    package var isShared: Bool { false }

    /// The full indices of several (device, pass type) pairs, in their order:
    /// one `index` each, unless a store reads them all at once.
    package func indices(of keys: [(device: String, passTypeIdentifier: String)]) async throws -> [DeviceIndex] {
        var indices: [DeviceIndex] = []
        indices.reserveCapacity(keys.count)
        for key in keys {
            indices.append(try await index(device: key.device, passTypeIdentifier: key.passTypeIdentifier))
        }
        return indices
    }
}

/// Everything a registration store keeps: what a command opens.
package typealias RegistrationDatabase = RegistrationStore & PushQueue & DeviceLog & RegistrationExport
    & OfferClaimStore
