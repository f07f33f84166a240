package import Hummingbird
package import Logging
package import NIOCore
package import RegistrationStore
package import ServiceLifecycle
import UnixSignals
package import WalletTree

/// `passforge serve`: Apple's pass web service and the output tree, on Hummingbird 2.
package struct PassServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// 0 picks a free port (see `onServerRunning`).
    package var port = 8080
    /// Prefix of every URL, the path of `webServiceURL` (`/passes`); empty for none.
    package var basePath = ""
    /// Requests per second per client address; 0 turns the limit off.
    package var rateLimit = 0
    package var limits = PassWebService.Limits()
    /// What `GET /metrics` reports; shared with the services that run beside
    /// the server (`serve --push` records its pushes here).
    package var metrics = ServerMetrics()
    /// How often `state.json` is stat'ed for a new build (by the watcher, never by a request).
    package var stateCheckInterval: Duration = .milliseconds(250)
    /// Connections idle this long are closed.
    package var idleTimeout: TimeAmount = .seconds(75)
    /// Time allowed for one request, from its first byte to the end of its
    /// body, however steadily the bytes trickle in; answered 408 beyond.
    package var requestReadTimeout: TimeAmount = .seconds(30)
    /// Registrations (POST) per minute per client address; 0 turns the limit off.
    package var registrationsPerMinute = 300
    /// Connections open at once; nil for no cap. `passforge serve` sets it below the
    /// open-file limit (see `ConnectionLimit`).
    package var maximumConnections: Int?
    /// Said in the warning at the cap: what set it (`" (--max-connections 896; open-file limit 1024)"`).
    package var connectionCapOrigin = ""
    /// DeviceCheck offers' claim call, when passforge.yml defines offers.
    package var offers: OfferClaimEndpoint?
    /// Whether registrations write the devices' index files (`serve --device-lists`).
    package var deviceLists = DeviceListSource.files

    package init() {}
}

package enum PassServer {
    package typealias Responder = RouterResponder<PassRequestContext>

    /// The application, ready to run; `onServerRunning` gets the bound port.
    /// `output` is the process's one output tree (its index writer is shared with `serve --push`).
    /// `services` run beside the server and shut down gracefully with it.
    package static func application(
        configuration: PassServerConfiguration,
        output: OutputFolder,
        store: any RegistrationStore & DeviceLog,
        services: [any Service] = [],
        reactions: [any NewBuildReaction] = [],
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<Responder> {
        let tree = PublishedTree(output: output, logger: logger)
        tree.reloadIfChanged()
        // The one reader of state.json: it installs each new build in the tree and hands it to the reactions.
        let watcher = NewBuildWatcher(tree: tree, reactions: reactions, interval: configuration.stateCheckInterval)
        let service = PassWebService(
            store: store, tree: tree, basePath: configuration.basePath,
            limits: configuration.limits,
            registrationsPerMinute: configuration.registrationsPerMinute,
            metrics: configuration.metrics, offers: configuration.offers,
            deviceLists: configuration.deviceLists, logger: logger)
        let connectionLimit = configuration.maximumConnections.map {
            ConnectionLimit(
                maximum: $0, origin: configuration.connectionCapOrigin, metrics: configuration.metrics,
                logger: logger)
        }
        return Application(
            router: router(service: service, rateLimit: configuration.rateLimit, logger: logger),
            server: PassHTTP1Channel.builder(
                idleTimeout: configuration.idleTimeout,
                requestReadTimeout: configuration.requestReadTimeout,
                connectionLimit: connectionLimit),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "passforge"),
            services: services + [watcher],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// Every API's routes under the base path, behind the access log, the metrics, `--rate-limit` and
    /// the fallback (414, 405, 404), in that order: each sees what the ones after it answer.
    static func router(service: PassWebService, rateLimit: Int, logger: Logger) -> Router<PassRequestContext> {
        let router = Router(context: PassRequestContext.self)
        router.add(middleware: AccessLogMiddleware(logger: logger))
        router.add(middleware: MetricsMiddleware(metrics: service.metrics, basePath: service.basePath))
        let limiter = rateLimit > 0 ? RateLimiter(ratePerSecond: rateLimit) : nil
        router.add(middleware: RateLimitMiddleware(limiter: limiter))
        router.add(middleware: RouteFallbackMiddleware(basePath: service.basePath))
        for routes in [
            service.webServiceRoutes(), service.downloadRoutes(), service.offerRoutes(),
            service.operationsRoutes(),
        ] {
            router.addRoutes(routes, atPath: RouterPath(service.basePath))
        }
        return router
    }

    /// Runs `application` until SIGTERM or SIGINT, then stops accepting connections and lets
    /// in-flight requests finish (ServiceLifecycle's graceful shutdown).
    package static func run(_ application: Application<Responder>) async throws {
        try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
