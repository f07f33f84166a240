package import Hummingbird
package import PassModel
import WalletTree

/// The URL space of Apple's web service (webServiceURL + `/v1/…`) plus
/// `/health` and the public `download/` tree, all under `--base-path`.
///
/// The raw request path is split on `/` and matched segment by segment;
/// nothing is percent-decoded, and every parameter must match its strict
/// pattern (`PathRules`) before a handler sees it.
package enum Route: Sendable, Equatable {
    /// Apple "Send an Updated Pass": GET /v1/passes/{passTypeIdentifier}/{serialNumber}, and
    /// "Retrieve the latest version of an order": GET /v1/orders/{orderTypeIdentifier}/{orderIdentifier}.
    case item(kind: WalletItemKind, typeIdentifier: String, identifier: String)
    /// Apple "Register" (POST) and "Unregister" (DELETE):
    /// /v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}.
    /// Orders use the same path with {deviceIdentifier}/…/{orderTypeIdentifier}/{orderIdentifier}:
    /// pass and order type identifiers share one namespace, so the item the path names tells the kind.
    case registration(device: String, passTypeIdentifier: String, serialNumber: String)
    /// Apple "Get the List of Updatable Passes" (and of orders, the same path):
    /// GET /v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}?passesUpdatedSince=tag
    /// (`ordersModifiedSince` for an order type).
    case serialNumbers(device: String, passTypeIdentifier: String)
    /// Apple "Log a Message": POST /v1/log
    case log
    /// GET /health
    case health
    /// GET /metrics: Prometheus' text format (keep it off the public URL space).
    case metrics
    /// GET /download/…: the public download links, at the paths the build wrote.
    case download(path: String)
    /// DeviceCheck offers: POST /v1/offers/{offer}/claims hands a device one pass of the offer's pool.
    case offerClaim(offer: String)

    package var allowedMethods: [HTTPRequest.Method] {
        switch self {
        case .item, .serialNumbers, .health, .metrics, .download: return [.get, .head]
        case .registration: return [.post, .delete]
        case .log, .offerClaim: return [.post]
        }
    }

    /// A short name for logs and metrics: never a parameter.
    package var name: String {
        switch self {
        case .item(let kind, _, _): return kind.noun
        case .registration: return "registration"
        case .serialNumbers: return "serialNumbers"
        case .log: return "log"
        case .health: return "health"
        case .metrics: return "metrics"
        case .download: return "download"
        case .offerClaim: return "offerClaim"
        }
    }

    /// The path in OpenAPI's template form (openapi.yaml's keys), without the base path.
    package var template: String {
        switch self {
        case .item(let kind, _, _): return "/v1/\(kind.webServiceFolder)/{\(kind.typeIdentifierKey)}/{\(kind.identifierKey)}"
        case .registration: return "/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}"
        case .serialNumbers: return "/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}"
        case .log: return "/v1/log"
        case .health: return "/health"
        case .metrics: return "/metrics"
        case .download(let path):
            return path.split(separator: "/").count == 2 ? "/download/{capability}" : "/download/{passTypeIdentifier}/{publicName}"
        case .offerClaim: return "/v1/offers/{offer}/claims"
        }
    }

    /// One route of each kind the matcher answers, for checking the API description against the server.
    package static let examples: [Route] = [
        .item(kind: .pass, typeIdentifier: "pass.com.example", identifier: "S-1"),
        .item(kind: .order, typeIdentifier: "order.com.example", identifier: "O-1"),
        .registration(device: "d1", passTypeIdentifier: "pass.com.example", serialNumber: "S-1"),
        .serialNumbers(device: "d1", passTypeIdentifier: "pass.com.example"),
        .log, .health, .metrics,
        .download(path: TreeLayout.capabilityDownloadPath(capability: "AAAAAAAAAAAAAAAAAAAAAA", kind: .pass)),
        .download(path: TreeLayout.publicDownloadPath(kind: .pass, type: "pass.com.example", identifier: "S-1")),
        .offerClaim(offer: "welcome-coupon"),
    ]

    /// Longest path accepted; longer ones are answered 414.
    package static let maximumPathLength = 1024

    /// The route of a raw request path (no query), or the error to answer.
    /// - Parameter basePath: normalized prefix (`/passes`) or empty.
    package static func match(path: some StringProtocol, basePath: String) -> Result<Route, APIError> {
        guard path.utf8.count <= maximumPathLength else { return .failure(APIError(.uriTooLong, "path longer than \(maximumPathLength) bytes")) }
        var rest = Substring(path)
        if !basePath.isEmpty {
            guard rest.hasPrefix(basePath) else { return .failure(.notFound) }
            rest = rest.dropFirst(basePath.count)
            guard rest.isEmpty || rest.first == "/" else { return .failure(.notFound) }
        }
        // Empty segments are skipped: a webServiceURL ending in "/" makes devices ask for "//v1/…".
        let segments = rest.split(separator: "/", omittingEmptySubsequences: true)
        switch segments.count {
        case 1 where segments[0] == "health":
            return .success(.health)
        case 1 where segments[0] == "metrics":
            return .success(.metrics)
        case 2 where segments[0] == "v1" && segments[1] == "log":
            return .success(.log)
        case 4 where segments[0] == "v1" && segments[1] == "offers" && segments[3] == "claims":
            guard PathRules.isOfferName(segments[2]) else { return .failure(.notFound) }
            return .success(.offerClaim(offer: String(segments[2])))
        case 4 where segments[0] == "v1" && itemKind(folder: segments[1]) != nil:
            let kind = itemKind(folder: segments[1])!
            return checked(type: segments[2], kind: kind).flatMap { type in
                checked(serial: segments[3], kind: kind).map { .item(kind: kind, typeIdentifier: type, identifier: $0) }
            }
        case 5 where segments[0] == "v1" && segments[1] == "devices" && segments[3] == "registrations":
            return checked(device: segments[2]).flatMap { device in
                checked(type: segments[4]).map { .serialNumbers(device: device, passTypeIdentifier: $0) }
            }
        case 6 where segments[0] == "v1" && segments[1] == "devices" && segments[3] == "registrations":
            return checked(device: segments[2]).flatMap { device in
                checked(type: segments[4]).flatMap { type in
                    checked(serial: segments[5]).map { .registration(device: device, passTypeIdentifier: type, serialNumber: $0) }
                }
            }
        case 2...3 where segments[0] == "download":
            guard segments.dropFirst().allSatisfy({ PathRules.isDownloadSegment($0) }),
                  WalletItemKind.allCases.contains(where: { segments.last!.hasSuffix(".\($0.fileExtension)") })
                    || (segments.count == 2 && segments[1].hasSuffix(".pkpasses"))
                    || (segments.count == 2 && LandingPageResponse.isLandingFile(String(segments[1]))) else {
                return .failure(.notFound)
            }
            return .success(.download(path: segments.joined(separator: "/")))
        default:
            return .failure(.notFound)
        }
    }

    private static func checked(device: Substring) -> Result<String, APIError> {
        PathRules.isDeviceLibraryIdentifier(device)
            ? .success(String(device))
            : .failure(.badRequest("invalid deviceLibraryIdentifier: 1 to 64 letters and digits"))
    }

    /// `passes` or `orders`: the kind whose web-service folder this is.
    private static func itemKind(folder: Substring) -> WalletItemKind? {
        WalletItemKind.allCases.first { $0.webServiceFolder == folder }
    }

    /// `kind` pass also on the paths passes and orders share (registrations): the pass's wording, as before orders.
    private static func checked(type: Substring, kind: WalletItemKind = .pass) -> Result<String, APIError> {
        PathRules.isPassTypeIdentifier(type)
            ? .success(String(type))
            : .failure(.badRequest("invalid \(kind.typeIdentifierKey): letters, digits, '.' and '-', at most 255"))
    }

    private static func checked(serial: Substring, kind: WalletItemKind = .pass) -> Result<String, APIError> {
        PathRules.isSerialNumber(serial)
            ? .success(String(serial))
            : .failure(.badRequest("invalid \(kind.identifierKey): [A-Za-z0-9][A-Za-z0-9._~-]{0,127}"))
    }

    /// `--base-path` as given (`passes`, `/passes/`, `/`) → `/passes` or empty.
    package static func normalizeBasePath(_ value: String?) -> String {
        let parts = (value ?? "").split(separator: "/", omittingEmptySubsequences: true)
        return parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }
}
