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

    package init(
        offer: String, claimIdentifier: String, passTypeIdentifier: String, serialNumber: String, bitIsSet: Bool
    ) {
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

/// A claim whose bit Apple has not confirmed: the bit update failed in a way
/// that may or may not have reached Apple. The pass stays the claim's; the
/// app's retry of the same claim (with fresh tokens) sets the bit. No device
/// token is kept for it: Apple's tokens are single-use.
package struct UnconfirmedClaim: Sendable, Equatable {
    package var offer: String
    package var claimIdentifier: String
    package var passTypeIdentifier: String
    package var serialNumber: String
    package var claimedAt: Double

    package init(
        offer: String, claimIdentifier: String, passTypeIdentifier: String, serialNumber: String, claimedAt: Double
    ) {
        self.offer = offer
        self.claimIdentifier = claimIdentifier
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
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
/// - Assigning a pass and recording the claim is one transaction.
/// - A DeviceCheck token is sent to Apple at most once: its SHA-256 is
///   recorded before the call (`spendDeviceTokens`), and a token recorded
///   before is refused, on every server sharing the store.
package protocol OfferClaimStore: Sendable {
    /// Makes each pool hold exactly `passes` (the build's offer passes).
    func replaceOfferPools(with passes: [OfferPass]) async throws

    /// The pass already handed out for this claim identifier, if any.
    func claim(offer: String, claimIdentifier: String) async throws -> OfferClaim?

    /// Hands the next free pass of the pool to this claim, or the one it already holds.
    func assignPass(offer: String, claimIdentifier: String, bit: Int, claimedAt: Double) async throws -> ClaimAssignment

    /// Apple confirmed the bit: the claim is complete.
    func completeBitUpdate(offer: String, claimIdentifier: String) async throws

    /// Undoes a claim whose bit Apple certainly did not set (it refused the update): the pass goes back
    /// to its pool. A confirmed claim is never released. Returns whether a claim was released.
    @discardableResult
    func releaseClaim(offer: String, claimIdentifier: String) async throws -> Bool

    /// Claims whose bit is not confirmed, oldest first.
    func unconfirmedClaims(limit: Int) async throws -> [UnconfirmedClaim]

    /// Records the SHA-256 digests (hex) of device tokens about to be sent to Apple: false when any of them
    /// was recorded before (a replayed token), and then none is recorded (but for a request racing another
    /// with a shared digest, whose fresh digests may stay recorded: tokens that never reached Apple).
    func spendDeviceTokens(_ digests: [String], at time: Double) async throws -> Bool

    /// Forgets the digests recorded before `time` (Apple no longer honours those tokens); returns how many.
    @discardableResult
    func purgeSpentDeviceTokens(spentBefore time: Double) async throws -> Int

    /// Each offer's counts, by offer name.
    func offerStatistics() async throws -> [OfferStatistics]
}
