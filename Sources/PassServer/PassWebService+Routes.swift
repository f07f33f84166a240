import Hummingbird
import Logging
import NIOCore
import PassModel

/// The routes of `passforge serve`, one `RouteCollection` per API, on Hummingbird's router.
extension PassWebService {
    /// Apple's pass web service and order web service ("Adding a Web Service to Update Passes", "Wallet
    /// Orders"): the items, the devices' registrations and lists of updatable items (answered from the
    /// store, also under `--device-lists store`), and the device log. Passes and orders share the
    /// registration paths, so they are one collection.
    func webServiceRoutes() -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        for kind in WalletItemKind.allCases {
            add(.item(kind), to: routes) { request, context in
                let type = try RouteParameters.type(context, kind: kind)
                let identifier = try RouteParameters.identifier(context, kind: kind)
                return try await itemResponse(request, kind: kind, type: type, identifier: identifier)
            }
        }
        add(.registration, to: routes) { request, context in
            let (device, type) = (try RouteParameters.device(context), try RouteParameters.type(context))
            let serial = try RouteParameters.identifier(context)
            guard request.method == .post else {
                return try await unregister(request, device: device, type: type, serial: serial)
            }
            return try await register(
                &request, client: context.clientAddress(of: request), device: device, type: type,
                serial: serial)
        }
        add(.serialNumbers, to: routes) { request, context in
            let (device, type) = (try RouteParameters.device(context), try RouteParameters.type(context))
            return try await serialNumbers(request, device: device, type: type)
        }
        add(.log, bodyLimit: limits.logBody, to: routes) { request, context in
            try await log(&request, client: context.clientAddress(of: request))
        }
        return routes
    }

    /// The public `download/` tree: Add-to-Wallet links, `.pkpasses` bundles, landing pages and their images.
    func downloadRoutes() -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        for route in [Route.capabilityDownload, .publicDownload] {
            add(route, to: routes) { request, context in
                try await downloadResponse(request, path: RouteParameters.downloadPath(context, route: route))
            }
        }
        return routes
    }

    /// DeviceCheck offers' claims (404 for every offer when passforge.yml defines none).
    func offerRoutes() -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        add(.offerClaim, bodyLimit: OfferClaimEndpoint.bodyLimit, to: routes) { request, context in
            let offer = try RouteParameters.offer(context)
            return try await claim(&request, client: context.clientAddress(of: request), offer: offer)
        }
        return routes
    }

    /// What operators and their monitors ask: `/health` and `/metrics`.
    func operationsRoutes() -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        add(.health, to: routes) { _, _ in health() }
        add(.metrics, to: routes) { _, _ in await metricsResponse() }
        return routes
    }

    private func add(
        _ route: Route, bodyLimit: Int? = nil, to routes: RouteCollection<Context>,
        handler: @escaping @Sendable (inout Request, Context) async throws -> Response
    ) {
        let endpoint = APIEndpoint(
            route: route, bodyLimit: bodyLimit ?? limits.registrationBody, logger: logger,
            handler: handler)
        for method in route.allowedMethods {
            routes.on(RouterPath(route.routerPath), method: method, responder: endpoint)
        }
    }
}

/// One route's handler. It answers every failure itself, as a response, so that the middlewares in
/// front of it (access log, metrics) see the status that is sent.
struct APIEndpoint: HTTPResponder {
    typealias Context = PassRequestContext
    let route: Route
    /// The 413's limit when a body read overflows outside `collectBody`.
    let bodyLimit: Int
    let logger: Logger
    let handler: @Sendable (inout Request, Context) async throws -> Response

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        do {
            let response = try await handler(&request, context)
            return request.method == .head ? PassWebService.headResponse(response) : response
        } catch let error as APIError {
            return error.response()
        } catch is NIOTooManyBytesError {
            return APIError.contentTooLarge(limit: bodyLimit).response()
        } catch {
            // Not bad input: the disk or the database failed. The device retries later.
            logger.error("\(request.method) \(route.name) failed: \(error)")
            return APIError(
                .serviceUnavailable, "temporarily unavailable; try again later",
                headers: [.retryAfter: "30"]
            ).response()
        }
    }
}

/// The innermost middleware: the 414 of a path too long, and the answer when no route takes the request.
/// Hummingbird's router answers a path it knows under another method as it answers an unknown path (its
/// not-found responder throws `HTTPError(.notFound)`); Apple's API says 405 with `Allow`. So the path is
/// asked again, as a GET, of `probe`, a router of the same templates whose every endpoint answers its
/// parameters' 400 or 404 (as the route's handler would, first) or else the route's 405.
struct RouteFallbackMiddleware: RouterMiddleware {
    typealias Context = PassRequestContext
    let probe: RouterResponder<Context>

    init(basePath: String) {
        let router = Router(context: Context.self)
        for route in Route.all {
            router.get(RouterPath(basePath + route.routerPath)) { _, context -> Response in
                try RouteParameters.validate(context, route: route)
                return APIError.methodNotAllowed(route.allowedMethods).response()
            }
        }
        probe = router.buildResponder()
    }

    func handle(
        _ request: Request, context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.utf8.count <= Route.maximumPathLength else {
            return APIError(.uriTooLong, "path longer than \(Route.maximumPathLength) bytes").response()
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: request.head.path)
            let answer = try await probe.respond(to: Request(head: head, body: request.body), context: context)
            return answer.status == .notFound ? APIError.notFound.response() : answer
        }
    }
}
