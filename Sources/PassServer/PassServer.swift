import Hummingbird
import Logging
import NIOCore
import RegistrationStore
import ServiceLifecycle
import UnixSignals

/// `passforge serve`: Apple's pass web service and the output tree, on Hummingbird 2.
public struct PassServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (see `onServerRunning`).
    public var port = 8080
    /// Prefix of every URL, the path of `webServiceURL` (`/passes`); empty for none.
    public var basePath = ""
    public var outputDirectory = "output"
    /// Requests per second per client address; 0 turns the limit off.
    public var rateLimit = 0
    public var limits = PassWebService.Limits()
    /// How often the build state is checked for a new build.
    public var stateCheckInterval: Duration = .milliseconds(250)
    /// Connections idle this long are closed.
    public var idleTimeout: TimeAmount = .seconds(75)

    public init() {}
}

public enum PassServer {
    public typealias Responder = MiddlewareChain<MiddlewareChain<PassWebService>>

    /// The application, ready to run; `onServerRunning` gets the bound port.
    /// `services` run beside the server and shut down gracefully with it.
    public static func application(
        configuration: PassServerConfiguration,
        store: any RegistrationStore & DeviceLog,
        services: [any Service] = [],
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<Responder> {
        let tree = PublishedTree(outputDirectory: configuration.outputDirectory, checkInterval: configuration.stateCheckInterval, logger: logger)
        _ = tree.current()
        let service = PassWebService(store: store, tree: tree, basePath: configuration.basePath, limits: configuration.limits, logger: logger)
        let limited = MiddlewareChain(
            middleware: RateLimitMiddleware(limiter: configuration.rateLimit > 0 ? RateLimiter(ratePerSecond: configuration.rateLimit) : nil),
            next: service)
        let responder = MiddlewareChain(middleware: AccessLogMiddleware(logger: logger), next: limited)
        return Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: configuration.idleTimeout)),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "passforge"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// Runs until SIGTERM or SIGINT, then stops accepting connections and lets
    /// in-flight requests finish (ServiceLifecycle's graceful shutdown).
    public static func run(
        configuration: PassServerConfiguration,
        store: any RegistrationStore & DeviceLog,
        services: [any Service] = [],
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let app = application(configuration: configuration, store: store, services: services, logger: logger, onServerRunning: onServerRunning)
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
