/// One pass of an offer's pool, as the build made it.
package struct OfferPass: Sendable, Hashable {
    package var offer: String
    package var passTypeIdentifier: String
    package var serialNumber: String

    package init(offer: String, passTypeIdentifier: String, serialNumber: String) {
        self.offer = offer
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
    }
}

/// A pass handed to one device for one claim.
package struct OfferClaim: Sendable, Equatable {
    package var offer: String
    /// The app's UUID for this attempt: a retry with it gets the same pass.
    package var claimIdentifier: String
    package var passTypeIdentifier: String
    package var serialNumber: String
    /// Whether Apple confirmed the device's bit was set.
    package var bitIsSet: Bool

    package init(offer: String, claimIdentifier: String, passTypeIdentifier: String, serialNumber: String, bitIsSet: Bool) {
        self.offer = offer
        self.claimIdentifier = claimIdentifier
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
        self.bitIsSet = bitIsSet
    }
}

/// What asking for a pass of an offer gave.
package enum ClaimAssignment: Sendable, Equatable {
    /// A pass no device held, now this claim's.
    case assigned(OfferClaim)
    /// The claim identifier had a pass already: the same one again.
    case existing(OfferClaim)
    /// Every pass of the pool is claimed.
    case exhausted
}

/// A claim whose bit Apple has not confirmed: retried until it is, with the
/// device token the claim came with (Apple keeps a token valid long enough to
/// retry the same request).
package struct PendingBitUpdate: Sendable, Equatable {
    package var offer: String
    package var claimIdentifier: String
    package var deviceToken: String
    package var bit: Int
    package var claimedAt: Double

    package init(offer: String, claimIdentifier: String, deviceToken: String, bit: Int, claimedAt: Double) {
        self.offer = offer
        self.claimIdentifier = claimIdentifier
        self.deviceToken = deviceToken
        self.bit = bit
        self.claimedAt = claimedAt
    }
}

/// Pool and claim counts of one offer.
package struct OfferStatistics: Sendable, Equatable {
    package var offer: String
    /// Passes in the pool now (in content), claimed or not.
    package var poolSize: Int
    /// Claims made, including claims of passes since removed from content.
    package var claimed: Int
    /// Passes of the pool no claim holds.
    package var left: Int

    package init(offer: String, poolSize: Int, claimed: Int, left: Int) {
        self.offer = offer
        self.poolSize = poolSize
        self.claimed = claimed
        self.left = left
    }
}

/// DeviceCheck offers (one pass per device): each offer's pool of pre-built
/// passes and the claims on them, kept with the registrations.
///
/// Every implementation keeps the same rules:
/// - A pass is held by at most one claim, ever, enforced by the database: two
///   servers never hand out the same pass (on PostgreSQL the next free pass is
///   taken with `FOR UPDATE SKIP LOCKED`).
/// - A claim identifier gets at most one pass per offer; asking again gives the same.
/// - A pass removed from content leaves its pool (it is not handed out), but a
///   claimed pass stays claimed across builds, and comes back claimed.
/// - Assigning a pass and recording the claim (with the device token, for the
///   bit update) is one transaction.
package protocol OfferClaimStore: Sendable {
    /// Makes each pool hold exactly `passes` (the build's offer passes).
    func replaceOfferPools(with passes: [OfferPass]) async throws

    /// The pass already handed out for this claim identifier, if any.
    func claim(offer: String, claimIdentifier: String) async throws -> OfferClaim?

    /// Hands the next free pass of the pool to this claim, or the one it already holds.
    func assignPass(offer: String, claimIdentifier: String, deviceToken: String, bit: Int, claimedAt: Double) async throws -> ClaimAssignment

    /// Apple confirmed the bit: the claim is complete and its device token forgotten.
    func completeBitUpdate(offer: String, claimIdentifier: String) async throws

    /// Claims whose bit is not confirmed, made at or before `claimedBefore`, oldest first.
    func pendingBitUpdates(claimedBefore: Double, limit: Int) async throws -> [PendingBitUpdate]

    /// Each offer's counts, by offer name.
    func offerStatistics() async throws -> [OfferStatistics]
}
