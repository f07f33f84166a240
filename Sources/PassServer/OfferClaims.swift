import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
package import PassOffers
import Prometheus
import RegistrationStore
import Synchronization
import WalletTree

/// DeviceCheck offers in `passforge serve`: the claim call, served only when
/// passforge.yml defines `offers:` (otherwise the route answers 404).
package struct OfferClaimEndpoint: Sendable {
    package var service: OfferClaimService
    /// Where `download/` is served, ending in `/` (the webServiceURL, whose
    /// base path the tree is served under): a claim answers with the pass's
    /// absolute download link, so the app can hand it to
    /// `PKAddPassesViewController`.
    package var downloadBaseURL: String
    /// Claims per minute per client address (an IPv6 client by its /64); nil when not limited.
    let limiter: RateLimiter?
    /// One claim at a time per client address.
    let gate: ClaimGate

    /// - Parameter claimsPerMinute: at once, then per minute evenly, per client address; 0 turns the limit off.
    package init(service: OfferClaimService, downloadBaseURL: String, claimsPerMinute: Int = defaultClaimsPerMinute) {
        self.service = service
        self.downloadBaseURL = downloadBaseURL.hasSuffix("/") ? downloadBaseURL : downloadBaseURL + "/"
        limiter = claimsPerMinute > 0 ? RateLimiter(perMinute: claimsPerMinute) : nil
        gate = ClaimGate(maximumWaiting: 8)
    }

    /// An honest app claims once; a shared address (a carrier's NAT, an office) has many apps behind it.
    package static let defaultClaimsPerMinute = 20

    /// Two DCDevice tokens of a few kilobytes of base64, at most 16 KiB each as passforge accepts them
    /// (`DeviceCheckClient.isWellFormed`), plus the claim identifier and the JSON around them.
    static let bodyLimit = 36 * 1024

    /// What the app sends, as the 400 for any other body says.
    static let bodyShape =
        #"{"claimIdentifier": "<UUID>", "queryToken": "<DCDevice token>", "updateToken": "<another DCDevice token>"}"#
}

/// Runs one claim at a time per key (a client address, an IPv6 client by its /64), the rest in order.
///
/// DeviceCheck has no test-and-set: two claims of one device in flight at once both see its bit clear.
/// passforge cannot tell which device a token belongs to, so it serializes what it can see, the client's
/// network. A claim waiting here runs after the one before it has set its bit, and so gets 409.
/// At most `maximumWaiting` claims wait per key; beyond that the caller answers 429.
final class ClaimGate: Sendable {
    private let waiting = Mutex<[String: [CheckedContinuation<Bool, Never>]]>([:])
    private let maximumWaiting: Int

    init(maximumWaiting: Int) {
        self.maximumWaiting = maximumWaiting
    }

    /// `body`'s result, or nil without running it when too many claims of `key` wait already.
    func serialized<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T? {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let immediate: Bool? = waiting.withLock { table in
                guard let queue = table[key] else {
                    table[key] = []
                    return true
                }
                guard queue.count < maximumWaiting else { return false }
                table[key, default: []].append(continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        guard admitted else { return nil }
        defer { release(key) }
        return try await body()
    }

    /// Hands the turn to the next waiting claim of `key`, or frees the key.
    private func release(_ key: String) {
        let next = waiting.withLock { table -> CheckedContinuation<Bool, Never>? in
            guard var queue = table[key], !queue.isEmpty else {
                table[key] = nil
                return nil
            }
            let first = queue.removeFirst()
            table[key] = queue
            return first
        }
        next?.resume(returning: true)
    }
}

extension PassWebService {
    /// `POST v1/offers/{offer}/claims` with `{"claimIdentifier", "queryToken", "updateToken"}`: 201 a new
    /// pass, 200 the same pass for a retried claim identifier, 409 claimed before, 410 exhausted, 404
    /// unknown offer, 400 bad body, reused or refused token, 429 (Retry-After) over the per-client limit,
    /// 503 (Retry-After) when Apple cannot be asked, 500 (no Retry-After) when Apple refuses passforge's key.
    func claim(_ request: inout Request, client: String, offer: String) async throws -> Response {
        guard let offers, offers.service.hasOffer(named: offer) else {
            if offers != nil { metrics.recordClaim(offer: "unknown", outcome: ClaimAnswer.unknownOffer.outcomeName) }
            throw APIError.notFound
        }
        if let seconds = offers.limiter?.admit(client) {
            throw APIError(
                .tooManyRequests, "too many claims from this network; try again later",
                headers: [.retryAfter: String(seconds)])
        }
        let buffer = try await collectBody(
            &request, limit: OfferClaimEndpoint.bodyLimit, route: "offerClaim",
            client: client)
        let body = try Self.claimRequest(from: buffer)
        guard
            let answer = try await offers.gate.serialized(
                RateLimiter.networkKey(of: client),
                {
                    try await offers.service.claim(offer: offer, body)
                })
        else {
            throw APIError(
                .tooManyRequests, "other claims from this network are in progress; try again later",
                headers: [.retryAfter: "1"])
        }
        metrics.recordClaim(offer: answer == .unknownOffer ? "unknown" : offer, outcome: answer.outcomeName)
        offers.recordStatus(in: metrics)
        switch answer {
        case .created(let claim): return claimed(claim, status: .created, offers: offers)
        case .repeated(let claim): return claimed(claim, status: .ok, offers: offers)
        case .alreadyClaimed: throw APIError(.conflict, "alreadyClaimed")
        case .claimOfAnotherDevice: throw APIError(.conflict, "claimIdentifierInUse")
        case .exhausted: throw APIError(.gone, "offerExhausted")
        case .unknownOffer: throw APIError.notFound
        case .badRequest(let message): throw APIError.badRequest(message)
        case .tokenReused:
            throw APIError.badRequest(
                "a token of this request was sent before; DeviceCheck tokens are single-use: generate two new ones")
        case .unavailable(let seconds):
            throw APIError(
                .serviceUnavailable, "DeviceCheck is unavailable; try again later",
                headers: [.retryAfter: String(seconds)])
        case .misconfigured(let newCause):
            if let newCause {
                logger.error(
                    "offers: Apple refused passforge's DeviceCheck key, so every claim fails until it is fixed: \(newCause)"
                )
            }
            // Not the device's fault and not temporary: no Retry-After, so apps do not hammer a broken setup.
            throw APIError(.internalServerError, "the server's DeviceCheck setup is refused by Apple")
        }
    }

    /// The claim body, or the 400 that says what to send (also for the old `deviceToken` body).
    static func claimRequest(from buffer: ByteBuffer) throws -> ClaimRequest {
        struct Body: Decodable {
            var claimIdentifier: String
            var queryToken: String
            var updateToken: String
        }
        let data = Data(buffer.readableBytesView)
        if let body = try? JSONDecoder().decode(Body.self, from: data) {
            return ClaimRequest(
                claimIdentifier: body.claimIdentifier, queryToken: body.queryToken,
                updateToken: body.updateToken)
        }
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["deviceToken"] != nil {
            throw APIError.badRequest(
                "deviceToken is no longer accepted: DeviceCheck tokens are single-use, so send "
                    + "two fresh ones, "
                    + "body \(OfferClaimEndpoint.bodyShape)")
        }
        throw APIError.badRequest("body must be \(OfferClaimEndpoint.bodyShape)")
    }

    private func claimed(_ claim: OfferClaim, status: HTTPResponse.Status, offers: OfferClaimEndpoint) -> Response {
        var object: [String: String] = [
            "passTypeIdentifier": claim.passTypeIdentifier, "serialNumber": claim.serialNumber,
        ]
        // A claimed pass since removed from content has no download left.
        if let pass = tree.current().item(type: claim.passTypeIdentifier, identifier: claim.serialNumber) {
            object["url"] = offers.downloadBaseURL + pass.record.downloadPath
        }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: Array(data) + [UInt8(ascii: "\n")])))
    }
}

extension OfferClaimEndpoint {
    /// `"ok"`, or `"misconfigured"` while Apple refuses passforge's key: `/health`'s `deviceCheck`.
    var healthStatus: String { service.status.misconfiguration == nil ? "ok" : "misconfigured" }

    /// `passforge_devicecheck_misconfigured` (1 while Apple refuses the key) and the refusals so far.
    func recordStatus(in metrics: ServerMetrics) {
        let factory = PrometheusMetricsFactory(registry: metrics.registry)
        let misconfigured = service.status.misconfiguration == nil ? 0 : 1
        Gauge(label: "passforge_devicecheck_misconfigured", factory: factory).record(misconfigured)
        Gauge(label: "passforge_devicecheck_key_refusals", factory: factory).record(Double(service.status.refusals))
    }
}

extension ClaimAnswer {
    /// The outcome's name in metrics: never a parameter of the request.
    var outcomeName: String {
        switch self {
        case .created: "created"
        case .repeated: "repeated"
        case .alreadyClaimed: "alreadyClaimed"
        case .claimOfAnotherDevice: "claimOfAnotherDevice"
        case .exhausted: "exhausted"
        case .unknownOffer: "unknownOffer"
        case .badRequest: "badRequest"
        case .tokenReused: "tokenReused"
        case .unavailable: "unavailable"
        case .misconfigured: "misconfigured"
        }
    }
}
