package import Hummingbird
package import PassModel
import WalletTree

/// One route of `passforge serve`: its path in OpenAPI's template form (openapi.yaml's keys, which is
/// also Hummingbird's `{parameter}` syntax, so the router matches the very templates the API describes),
/// the methods it answers, and the short name logs and metrics use (never a parameter).
///
/// Every route is under `--base-path`. Hummingbird's router splits the raw path on `/` and skips empty
/// segments (a webServiceURL ending in "/" makes devices ask for "//v1/…"); nothing is percent-decoded,
/// and every parameter must match its strict pattern (`PathRules`) before a handler sees it.
package struct Route: Sendable, Hashable {
    package let name: String
    package let template: String
    package let allowedMethods: [HTTPRequest.Method]
    /// The template as the router holds it: Hummingbird's trie keeps one parameter per position of a path
    /// (two would clash, `Router.validate`), so the public download reads its first segment under the
    /// capability download's name.
    let routerPath: String

    init(name: String, template: String, allowedMethods: [HTTPRequest.Method], routerPath: String? = nil) {
        self.name = name
        self.template = template
        self.allowedMethods = allowedMethods
        self.routerPath = routerPath ?? template
    }

    /// Apple "Send an Updated Pass": GET /v1/passes/{passTypeIdentifier}/{serialNumber}, and
    /// "Retrieve the latest version of an order": GET /v1/orders/{orderTypeIdentifier}/{orderIdentifier}.
    package static func item(_ kind: WalletItemKind) -> Route {
        Route(
            name: kind.noun,
            template: "/v1/\(kind.webServiceFolder)/{\(kind.typeIdentifierKey)}/{\(kind.identifierKey)}",
            allowedMethods: [.get, .head])
    }

    /// Apple "Register" (POST) and "Unregister" (DELETE). Orders use the same path with
    /// {deviceIdentifier}/…/{orderTypeIdentifier}/{orderIdentifier}: pass and order type identifiers share one
    /// namespace, so the item the path names tells the kind.
    package static let registration = Route(
        name: "registration",
        template: "/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}",
        allowedMethods: [.post, .delete])
    /// Apple "Get the List of Updatable Passes" (and of orders, the same path), `?passesUpdatedSince=tag`
    /// (`ordersModifiedSince` for an order type).
    package static let serialNumbers = Route(
        name: "serialNumbers", template: "/v1/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}",
        allowedMethods: [.get, .head])
    /// Apple "Log a Message".
    package static let log = Route(name: "log", template: "/v1/log", allowedMethods: [.post])
    /// DeviceCheck offers: a claim hands a device one pass of the offer's pool.
    package static let offerClaim = Route(
        name: "offerClaim", template: "/v1/offers/{offer}/claims",
        allowedMethods: [.post])
    /// The public download links (capability paths, landing pages, bundles), at the paths the build wrote.
    package static let capabilityDownload = Route(
        name: "download", template: "/download/{capability}",
        allowedMethods: [.get, .head])
    /// The deliberately public download links (`public: true`).
    package static let publicDownload = Route(
        name: "download", template: "/download/{passTypeIdentifier}/{publicName}",
        allowedMethods: [.get, .head],
        routerPath: "/download/{capability}/{publicName}")
    package static let health = Route(name: "health", template: "/health", allowedMethods: [.get, .head])
    /// Prometheus' text format (keep it off the public URL space).
    package static let metrics = Route(name: "metrics", template: "/metrics", allowedMethods: [.get, .head])

    /// Every route the server answers.
    package static let all: [Route] =
        WalletItemKind.allCases.map(item) + [
            registration, serialNumbers, log, offerClaim, capabilityDownload, publicDownload, health, metrics,
        ]

    /// Longest path accepted; longer ones are answered 414.
    package static let maximumPathLength = 1024

    /// `--base-path` as given (`passes`, `/passes/`, `/`) → `/passes` or empty.
    package static func normalizeBasePath(_ value: String?) -> String {
        let parts = (value ?? "").split(separator: "/", omittingEmptySubsequences: true)
        return parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }
}

/// The strict patterns of the path's parameters: a 400 that names the parameter, or a 404 where the
/// path names nothing that could exist.
enum RouteParameters {
    static func device(_ context: some RequestContext) throws(APIError) -> String {
        let value = raw(context, "deviceLibraryIdentifier")
        guard PathRules.isDeviceLibraryIdentifier(value) else {
            throw .badRequest("invalid deviceLibraryIdentifier: 1 to 64 letters and digits")
        }
        return String(value)
    }

    /// `kind` pass also on the paths passes and orders share (registrations): the pass's wording, as before orders.
    static func type(_ context: some RequestContext, kind: WalletItemKind = .pass) throws(APIError) -> String {
        let value = raw(context, kind.typeIdentifierKey)
        guard PathRules.isPassTypeIdentifier(value) else {
            throw .badRequest("invalid \(kind.typeIdentifierKey): letters, digits, '.' and '-', at most 255")
        }
        return String(value)
    }

    static func identifier(_ context: some RequestContext, kind: WalletItemKind = .pass) throws(APIError) -> String {
        let value = raw(context, kind.identifierKey)
        guard PathRules.isSerialNumber(value) else {
            throw .badRequest("invalid \(kind.identifierKey): [A-Za-z0-9][A-Za-z0-9._~-]{0,127}")
        }
        return String(value)
    }

    static func offer(_ context: some RequestContext) throws(APIError) -> String {
        let value = raw(context, "offer")
        guard PathRules.isOfferName(value) else { throw .notFound }
        return String(value)
    }

    /// `download/…` relative to the output folder: a file name the build could have written there.
    static func downloadPath(_ context: some RequestContext, route: Route) throws(APIError) -> String {
        let segments =
            route == .publicDownload
            ? [raw(context, "capability"), raw(context, "publicName")] : [raw(context, "capability")]
        let last = segments[segments.count - 1]
        let isItem = WalletItemKind.allCases.contains { last.hasSuffix(".\($0.fileExtension)") }
        let isBundleOrPage =
            segments.count == 1
            && (last.hasSuffix(".pkpasses") || LandingPageResponse.isLandingFile(String(last)))
        guard segments.allSatisfy({ PathRules.isDownloadSegment($0) }), isItem || isBundleOrPage else {
            throw .notFound
        }
        return TreeLayout.downloadFolder + "/" + segments.joined(separator: "/")
    }

    /// Checks `route`'s parameters without keeping them: how the method probe answers a path's 400 or 404
    /// before its 405, as the handler would.
    static func validate(_ context: some RequestContext, route: Route) throws(APIError) {
        switch route.name {
        case "pass", "order":
            let kind: WalletItemKind = route.name == "pass" ? .pass : .order
            _ = try type(context, kind: kind)
            _ = try identifier(context, kind: kind)
        case "registration":
            _ = try device(context)
            _ = try type(context)
            _ = try identifier(context)
        case "serialNumbers":
            _ = try device(context)
            _ = try type(context)
        case "offerClaim": _ = try offer(context)
        case "download": _ = try downloadPath(context, route: route)
        default: break
        }
    }

    private static func raw(_ context: some RequestContext, _ name: String) -> Substring {
        context.parameters[Substring(name)] ?? ""
    }
}
