import Foundation
import Hummingbird
import NIOCore
import WalletTree
package import PassOffers
import RegistrationStore

/// DeviceCheck offers in `passforge serve`: the claim call, served only when
/// passforge.yml defines `offers:` (otherwise the route answers 404).
package struct OfferClaimEndpoint: Sendable {
    package var service: OfferClaimService
    /// Where `download/` is served, ending in `/` (the webServiceURL, whose
    /// base path the tree is served under): a claim answers with the pass's
    /// absolute download link, so the app can hand it to
    /// `PKAddPassesViewController`.
    package var downloadBaseURL: String

    package init(service: OfferClaimService, downloadBaseURL: String) {
        self.service = service
        self.downloadBaseURL = downloadBaseURL.hasSuffix("/") ? downloadBaseURL : downloadBaseURL + "/"
    }

    /// A DCDevice token is a few kilobytes of base64, at most 16 KiB as passforge accepts it
    /// (`DeviceCheckClient.isWellFormed`), plus the claim identifier and the JSON around them.
    static let bodyLimit = 20 * 1024
}

extension PassWebService {
    /// `POST v1/offers/{offer}/claims` with `{"deviceToken": …, "claimIdentifier": …}`:
    /// 201 a new pass, 200 the same pass for a repeated claim identifier, 409
    /// claimed before, 410 exhausted, 404 unknown offer, 400 bad body or
    /// device token, 503 (Retry-After) when Apple cannot be asked.
    func claim(_ request: inout Request, client: String, offer: String) async throws -> Response {
        guard let offers else { throw APIError.notFound }
        let buffer = try await collectBody(&request, limit: OfferClaimEndpoint.bodyLimit, route: "offerClaim", client: client)
        struct Body: Decodable {
            var deviceToken: String
            var claimIdentifier: String
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)) else {
            throw APIError.badRequest(#"body must be {"deviceToken": "<DCDevice token, base64>", "claimIdentifier": "<UUID>"}"#)
        }
        let answer = try await offers.service.claim(offer: offer, deviceToken: body.deviceToken, claimIdentifier: body.claimIdentifier)
        metrics.recordClaim(offer: answer == .unknownOffer ? "unknown" : offer, outcome: answer.outcomeName)
        switch answer {
        case .created(let claim): return claimed(claim, status: .created, offers: offers)
        case .repeated(let claim): return claimed(claim, status: .ok, offers: offers)
        case .alreadyClaimed: throw APIError(.conflict, "alreadyClaimed")
        case .exhausted: throw APIError(.gone, "offerExhausted")
        case .unknownOffer: throw APIError.notFound
        case .badRequest(let message): throw APIError.badRequest(message)
        case .unavailable(let seconds):
            throw APIError(.serviceUnavailable, "DeviceCheck is unavailable; try again later", headers: [.retryAfter: String(seconds)])
        }
    }

    private func claimed(_ claim: OfferClaim, status: HTTPResponse.Status, offers: OfferClaimEndpoint) -> Response {
        var object: [String: String] = ["passTypeIdentifier": claim.passTypeIdentifier, "serialNumber": claim.serialNumber]
        // A claimed pass since removed from content has no download left.
        if let pass = tree.current().item(type: claim.passTypeIdentifier, identifier: claim.serialNumber) {
            object["url"] = offers.downloadBaseURL + pass.record.downloadPath
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: Array(data) + [UInt8(ascii: "\n")])))
    }
}

extension ClaimAnswer {
    /// The outcome's name in metrics: never a parameter of the request.
    var outcomeName: String {
        switch self {
        case .created: "created"
        case .repeated: "repeated"
        case .alreadyClaimed: "alreadyClaimed"
        case .exhausted: "exhausted"
        case .unknownOffer: "unknownOffer"
        case .badRequest: "badRequest"
        case .unavailable: "unavailable"
        }
    }
}
