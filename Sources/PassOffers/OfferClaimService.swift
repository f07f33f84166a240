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

/// One claim call's body: the app's UUID for this claim and two fresh DCDevice tokens, one for each call
/// to Apple. Apple's `DCDevice.generateToken` page asks that a token be treated as single-use, so the
/// bit query and the bit update cannot share one.
package struct ClaimRequest: Sendable, Equatable {
    package var claimIdentifier: String
    package var queryToken: String
    package var updateToken: String

    package init(claimIdentifier: String, queryToken: String, updateToken: String) {
        self.claimIdentifier = claimIdentifier
        self.queryToken = queryToken
        self.updateToken = updateToken
    }
}

/// What a claim call answers (`POST v1/offers/{offer}/claims`).
package enum ClaimAnswer: Sendable, Equatable {
    /// 201: a pass no device held, now this device's, its bit set.
    case created(OfferClaim)
    /// 200: the claim identifier was seen before, and Apple's bits agree; the same pass again.
    case repeated(OfferClaim)
    /// 409: the device's bit says it claimed this offer before.
    case alreadyClaimed
    /// 409: the claim identifier belongs to a completed claim, but this device's bit is not set: it is
    /// another device's claim (a claim identifier is a bearer secret; this one leaked).
    case claimOfAnotherDevice
    /// 410: every pass of the pool is claimed.
    case exhausted
    /// 404.
    case unknownOffer
    /// 400: a malformed request, or Apple refused a device token.
    case badRequest(String)
    /// 400: a token of this request was sent to Apple before (a replayed request).
    case tokenReused
    /// 503 with `Retry-After`: Apple could not be asked or did not confirm; the app retries the same claim
    /// identifier with fresh tokens.
    case unavailable(retryAfterSeconds: Int)
    /// 500, no `Retry-After`: Apple refused passforge's key (401, 403): an operator must fix the configuration.
    /// `newCause` is the refusal, for the server's error log, the first time this cause is seen; nil after.
    case misconfigured(newCause: String?)
}

/// The claim sequence of DeviceCheck offers. Nothing is signed here: the
/// passes were built and published by CI; a claim only hands one out.
///
/// 1. The request's two tokens are recorded as spent (their SHA-256, in the
///    store shared by every server), or the request is refused: a captured
///    request cannot be replayed, in parallel or later.
/// 2. A claim identifier seen before is a retry: Apple is asked with the
///    retry's own tokens (`retry`).
/// 3. The query token asks for the device's two bits; the offer's bit set
///    means it claimed before (409).
/// 4. The next free pass is assigned and the claim recorded, in one transaction.
/// 5. The update token sets the bit. Only then is the pass handed out (201).
///    If Apple refused the update, nothing was set: the pass goes back to
///    the pool. If the answer was lost (a 5xx, a timeout), the claim stays,
///    unconfirmed, and the app's retry sets the bit with its own update token:
///    a token is never sent twice, so there is no background retry.
package final class OfferClaimService: Sendable {
    private let offers: [String: OfferDefinition]
    private let store: any OfferClaimStore
    private let deviceCheck: any DeviceCheckCalling
    private let now: @Sendable () -> Double
    /// Seconds a client should wait after a 503.
    package let retryAfterSeconds: Int
    /// How long the digest of a spent token is kept (`purgeSpentTokens`).
    package let tokenRetention: Double
    /// Whether Apple accepts passforge's key, for `/health` and `/metrics`.
    package let status = DeviceCheckStatus()

    /// Apple publishes no validity period for a DCDevice token: it "stays valid long enough to retry the same
    /// request" (generateToken(completionHandler:)), so minutes. A week keeps a digest far past that; a digest
    /// is a 64-character row, so a week of claims costs little.
    package static let defaultTokenRetention: Double = 7 * 24 * 3600

    package init(
        offers: [OfferDefinition], store: any OfferClaimStore, deviceCheck: any DeviceCheckCalling,
        retryAfterSeconds: Int = 5, tokenRetention: Double = defaultTokenRetention,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.offers = Dictionary(offers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.store = store
        self.deviceCheck = deviceCheck
        self.retryAfterSeconds = retryAfterSeconds
        self.tokenRetention = tokenRetention
        self.now = now
    }

    /// The claim identifier as stored: a UUID (any case) in upper case, or nil. It is a bearer secret (a retry
    /// with it gets the pass again), so it must be the app's random UUID, not something short or guessable.
    package static func canonicalClaimIdentifier(_ text: String) -> String? {
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else { return nil }
        return uuid.uuidString
    }

    /// Whether passforge.yml defines the offer `name`.
    package func hasOffer(named name: String) -> Bool { offers[name] != nil }

    package func claim(offer name: String, _ request: ClaimRequest) async throws -> ClaimAnswer {
        guard let offer = offers[name] else { return .unknownOffer }
        guard let claimIdentifier = Self.canonicalClaimIdentifier(request.claimIdentifier) else {
            return .badRequest(
                "claimIdentifier must be a UUID the app makes for this claim (UUID().uuidString), kept for its retries")
        }
        for (field, token) in [("queryToken", request.queryToken), ("updateToken", request.updateToken)]
        where !DeviceCheckClient.isWellFormed(deviceToken: token) {
            return .badRequest("\(field) must be DCDevice.generateToken's data, base64-encoded without line breaks")
        }
        guard request.queryToken != request.updateToken else {
            return .badRequest(
                "queryToken and updateToken must be two tokens: call DCDevice.generateToken once for each "
                    + "(a token is single-use)")
        }
        let digests = [request.queryToken, request.updateToken].map(DeviceCheckClient.digest(ofDeviceToken:))
        guard try await store.spendDeviceTokens(digests, at: now()) else { return .tokenReused }
        if let earlier = try await store.claim(offer: offer.name, claimIdentifier: claimIdentifier) {
            return try await retry(earlier, offer: offer, request: request)
        }
        let bits: DeviceBits
        do {
            bits = try await query(request.queryToken)
        } catch {
            return answer(for: error, token: "queryToken")
        }
        guard !bits[offer.bit] else { return .alreadyClaimed }
        let assignment = try await store.assignPass(
            offer: offer.name, claimIdentifier: claimIdentifier, bit: offer.bit,
            claimedAt: now())
        switch assignment {
        case .exhausted:
            return .exhausted
        case .existing(let claim):
            // The same claim identifier, sent twice at once: the other request assigned it and is setting its bit.
            return claim.bitIsSet ? .repeated(claim) : .unavailable(retryAfterSeconds: retryAfterSeconds)
        case .assigned(var claim):
            var claimed = bits
            claimed[offer.bit] = true
            do {
                try await update(claimed, request.updateToken)
            } catch {
                // Refused: Apple set nothing, and the pass must not stay with a device whose bit is clear.
                if error.leftBitsUnchanged {
                    try await store.releaseClaim(offer: offer.name, claimIdentifier: claimIdentifier)
                }
                return answer(for: error, token: "updateToken")
            }
            try await store.completeBitUpdate(offer: offer.name, claimIdentifier: claimIdentifier)
            claim.bitIsSet = true
            return .created(claim)
        }
    }

    /// A claim identifier seen before, with fresh tokens. A completed claim gets its pass again only when
    /// Apple says the asking device's bit is set: a leaked identifier does not hand the pass to another
    /// device. An unconfirmed claim (its update's answer was lost) gets its bit set now, with this
    /// request's update token, unless Apple shows it set already.
    private func retry(
        _ earlier: OfferClaim, offer: OfferDefinition,
        request: ClaimRequest
    ) async throws -> ClaimAnswer {
        var bits: DeviceBits
        do {
            bits = try await query(request.queryToken)
        } catch {
            return answer(for: error, token: "queryToken")
        }
        if earlier.bitIsSet { return bits[offer.bit] ? .repeated(earlier) : .claimOfAnotherDevice }
        if !bits[offer.bit] {
            bits[offer.bit] = true
            do {
                try await update(bits, request.updateToken)
            } catch {
                return answer(for: error, token: "updateToken")
            }
        }
        try await store.completeBitUpdate(offer: offer.name, claimIdentifier: earlier.claimIdentifier)
        var completed = earlier
        completed.bitIsSet = true
        return .repeated(completed)
    }

    private func query(_ token: String) async throws(DeviceCheckError) -> DeviceBits {
        try await ask { client throws(DeviceCheckError) in try await client.queryBits(deviceToken: token) }
    }

    private func update(_ bits: DeviceBits, _ token: String) async throws(DeviceCheckError) {
        try await ask { client throws(DeviceCheckError) in try await client.updateBits(bits, deviceToken: token) }
    }

    /// One call to Apple, its outcome recorded in `status`.
    private func ask<T>(
        _ call: (any DeviceCheckCalling) async throws(DeviceCheckError) -> T
    ) async throws(DeviceCheckError) -> T {
        do {
            let value = try await call(deviceCheck)
            status.recordAccepted()
            return value
        } catch {
            if !error.isMisconfiguration { status.recordAccepted() }
            throw error
        }
    }

    /// Claims whose bit Apple has not confirmed, oldest first (`passforge offers`).
    package func unconfirmedClaims(limit: Int = 1000) async throws -> [UnconfirmedClaim] {
        try await store.unconfirmedClaims(limit: limit)
    }

    /// Forgets the digests of tokens spent more than `tokenRetention` ago; returns how many.
    @discardableResult
    package func purgeSpentTokens() async throws -> Int {
        try await store.purgeSpentDeviceTokens(spentBefore: now() - tokenRetention)
    }

    /// Shuts the DeviceCheck client down (its HTTP client must not outlive the process's work).
    package func shutdown() async {
        await deviceCheck.shutdown()
    }

    private func answer(for error: DeviceCheckError, token: String) -> ClaimAnswer {
        if error.isMisconfiguration {
            return .misconfigured(newCause: status.recordMisconfiguration(error) ? error.description : nil)
        }
        switch error.kind {
        case .badDeviceToken:
            return .badRequest("Apple refused the \(token) (Bad Device Token): send a fresh DCDevice token")
        // Apple busy or unavailable, or an answer outside Apple's table: nothing was handed out; the device may retry.
        default: return .unavailable(retryAfterSeconds: retryAfterSeconds)
        }
    }
}
