import Foundation
package import Hummingbird
import Logging
import Synchronization

/// One line per request: method, path (device identifier shortened), status,
/// duration, client address. Never a header, so never a token.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = PassRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        if logger.logLevel <= .info {
            let elapsed = ContinuousClock.now - start
            let milliseconds =
                Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000 + Double(elapsed.components.seconds)
                * 1000
            logger.info(
                "\(request.method) \(LogRedaction.path(request.uri.path)) \(response.status.code) \(String(format: "%.1f", milliseconds))ms \(context.clientAddress(of: request))"
            )
        }
        return response
    }
}

/// Every answered request into `ServerMetrics`: route (by name, never a
/// parameter), method, status and duration.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = PassRequestContext
    let metrics: ServerMetrics
    /// Route names by the router's endpoint path (the base path and the template).
    let routeNames: [String: String]

    init(metrics: ServerMetrics, basePath: String) {
        self.metrics = metrics
        routeNames = Dictionary(
            Route.all.map { (RouterPath(basePath + $0.routerPath).description, $0.name) },
            uniquingKeysWith: { first, _ in first })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // Set by the router when it found the route, also for a 405 or a parameter's 400.
        let route = context.endpointPath.flatMap { routeNames[$0] } ?? "unmatched"
        metrics.recordRequest(
            route: route, method: Self.methodLabel(request.method), status: Int(response.status.code),
            duration: ContinuousClock.now - start)
        return response
    }

    /// A bounded set of label values, whatever methods clients invent.
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .patch, .options: return method.rawValue
        default: return "other"
        }
    }
}

/// `--rate-limit N`: at most N requests per second per client address (a
/// token bucket holding N; an IPv6 client by its /64), answered 429 with Retry-After beyond that.
/// Protects the database from one misbehaving client; devices retry with
/// backoff (Apple: "Each time it tries again, it waits longer").
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = PassRequestContext
    /// Nil when `--rate-limit` is 0.
    let limiter: RateLimiter?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let limiter, !limiter.allow(context.clientAddress(of: request)) {
            return APIError(.tooManyRequests, "too many requests; slow down", headers: [.retryAfter: "1"]).response()
        }
        return try await next(request, context)
    }
}
