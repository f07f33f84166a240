package import DeviceCheck
import Foundation
package import RegistrationStore

/// An offer of passforge.yml: a pool of pre-built passes, one per device,
/// with the DeviceCheck bit that marks a device that claimed.
package struct OfferDefinition: Sendable, Equatable {
    package var name: String
    /// 0 or 1: which of Apple's two bits means "claimed".
    package var bit: Int

    package init(name: String, bit: Int) {
        self.name = name
        self.bit = bit
    }
}

/// What a claim call answers (`POST v1/offers/{offer}/claims`).
package enum ClaimAnswer: Sendable, Equatable {
    /// 201: a pass no device held, now this device's.
    case created(OfferClaim)
    /// 200: the claim identifier was seen before; the same pass again.
    case repeated(OfferClaim)
    /// 409: the device's bit says it claimed this offer before.
    case alreadyClaimed
    /// 410: every pass of the pool is claimed.
    case exhausted
    /// 404.
    case unknownOffer
    /// 400: a malformed request, or Apple refused the device token.
    case badRequest(String)
    /// 503 with `Retry-After`: Apple could not be asked; nothing was assigned.
    case unavailable(retryAfterSeconds: Int)
}

/// The claim sequence of DeviceCheck offers. Nothing is signed here: the
/// passes were built and published by CI; a claim only hands one out.
///
/// 1. A claim identifier seen before gets its pass again (a retry after a lost
///    answer must never get a second pass, and must not be refused because
///    the first attempt set the bit).
/// 2. Query the device's two bits; the offer's bit set means it claimed before.
/// 3. Assign the next free pass and record the claim with the device token, in
///    one transaction.
/// 4. Set the bit. If that fails, the claim stays recorded and
///    `retryPendingBitUpdates` sets it later: the pass is the device's either way.
///
/// The request carries one DCDevice token, used for the query and the update
/// of one claim: Apple keeps a token valid "long enough to retry the same
/// request" and asks that it not be reused across requests, which a claim
/// (one request of the app) does not do.
package final class OfferClaimService: Sendable {
    private let offers: [String: OfferDefinition]
    private let store: any OfferClaimStore
    private let deviceCheck: any DeviceCheckCalling
    private let now: @Sendable () -> Double
    /// Seconds a client should wait after a 503.
    package let retryAfterSeconds: Int

    package init(offers: [OfferDefinition], store: any OfferClaimStore, deviceCheck: any DeviceCheckCalling, retryAfterSeconds: Int = 5,
                 now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.offers = Dictionary(offers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.store = store
        self.deviceCheck = deviceCheck
        self.retryAfterSeconds = retryAfterSeconds
        self.now = now
    }

    /// A claim identifier: the app's UUID for one attempt (any case), or up to
    /// 64 characters of `[A-Za-z0-9._-]`, so that it is safe in logs and keys.
    package static func isValidClaimIdentifier(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 46 || byte == 95
        }
    }

    package func claim(offer name: String, deviceToken: String, claimIdentifier: String) async throws -> ClaimAnswer {
        guard let offer = offers[name] else { return .unknownOffer }
        guard Self.isValidClaimIdentifier(claimIdentifier) else {
            return .badRequest("claimIdentifier must be the app's UUID for this attempt (at most 64 of A-Z a-z 0-9 . _ -)")
        }
        guard DeviceCheckClient.isWellFormed(deviceToken: deviceToken) else {
            return .badRequest("deviceToken must be DCDevice.generateToken's data, base64-encoded without line breaks")
        }
        if var earlier = try await store.claim(offer: offer.name, claimIdentifier: claimIdentifier) {
            // The first attempt's bit update failed (or its server died): this retry's fresh token sets it now.
            if !earlier.bitIsSet, (try? await setBit(offer.bit, deviceToken: deviceToken)) != nil {
                try? await store.completeBitUpdate(offer: offer.name, claimIdentifier: claimIdentifier)
                earlier.bitIsSet = true
            }
            return .repeated(earlier)
        }
        let bits: DeviceBits
        do {
            bits = try await deviceCheck.queryBits(deviceToken: deviceToken)
        } catch {
            return answer(for: error)
        }
        guard !bits[offer.bit] else { return .alreadyClaimed }
        switch try await store.assignPass(offer: offer.name, claimIdentifier: claimIdentifier, deviceToken: deviceToken, bit: offer.bit,
                                          claimedAt: now()) {
        case .exhausted:
            return .exhausted
        case .existing(let claim):
            // The same claim identifier, sent twice at once: the other request assigned it.
            return .repeated(claim)
        case .assigned(var claim):
            if (try? await setBit(offer.bit, deviceToken: deviceToken, knownBits: bits)) != nil {
                try? await store.completeBitUpdate(offer: offer.name, claimIdentifier: claimIdentifier)
                claim.bitIsSet = true
            }
            return .created(claim)
        }
    }

    /// Sets `bit` of the device, keeping the other as Apple has it (`knownBits`, when this request just queried them).
    private func setBit(_ bit: Int, deviceToken: String, knownBits: DeviceBits? = nil) async throws(DeviceCheckError) {
        var bits = if let knownBits { knownBits } else { try await deviceCheck.queryBits(deviceToken: deviceToken) }
        guard !bits[bit] else { return }
        bits[bit] = true
        try await deviceCheck.updateBits(bits, deviceToken: deviceToken)
    }

    /// Sets the bits of claims whose update failed, made at least `minimumAge`
    /// seconds ago (younger ones may still be setting theirs). Returns how many
    /// were set. A claim Apple's answer shows can never be completed (its token
    /// refused) is closed, so it is not retried forever; its pass stays claimed.
    @discardableResult
    package func retryPendingBitUpdates(minimumAge: Double = 30, limit: Int = 500) async throws -> Int {
        var completed = 0
        for pending in try await store.pendingBitUpdates(claimedBefore: now() - minimumAge, limit: limit) {
            do {
                try await setBit(pending.bit, deviceToken: pending.deviceToken)
                try await store.completeBitUpdate(offer: pending.offer, claimIdentifier: pending.claimIdentifier)
                completed += 1
            } catch let error as DeviceCheckError where error.kind == .badDeviceToken {
                try await store.completeBitUpdate(offer: pending.offer, claimIdentifier: pending.claimIdentifier)
            } catch is DeviceCheckError {
                // Apple unavailable or busy: the next round tries again.
                continue
            }
        }
        return completed
    }

    /// Shuts the DeviceCheck client down (its HTTP client must not outlive the process's work).
    package func shutdown() async {
        await deviceCheck.shutdown()
    }

    private func answer(for error: DeviceCheckError) -> ClaimAnswer {
        switch error.kind {
        case .badDeviceToken: .badRequest("Apple refused the device token (Bad Device Token)")
        // Apple unavailable, or passforge's key refused: either way the device did nothing wrong and may retry.
        default: .unavailable(retryAfterSeconds: retryAfterSeconds)
        }
    }
}
