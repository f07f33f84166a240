import ArgumentParser
import AtomicFiles
import ConcurrencySupport
import Foundation
import Logging
import NIOCore
import PassBuild
import PassContent
import PassModel
import PassOffers
import PassPush
import PassServer
import RegistrationStore
import ServiceLifecycle
import WalletTree

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the pass web service (register, unregister, log, serial numbers) over the output tree.",
        discussion: """
            Serves Apple's web service under webServiceURL: pass downloads with Authorization and
            conditional GET, device registrations kept in the registration store (an SQLite file by
            default; PASSFORGE_DATABASE_URL=sqlite:PATH or a path chooses another), the per-device
            index files of the output tree, and the public download/ links. A new build is picked up
            without a restart. SIGTERM or SIGINT stops it after the requests in progress.

            The base path defaults to the path of webServiceURL in passforge.yml.

            Examples:
              passforge serve                                 http://127.0.0.1:8080/
              passforge serve --host 0.0.0.0 --port 80 --rate-limit 20
              passforge serve --registration-limit 0          no registration limit
              PASSFORGE_DATABASE_URL=sqlite:/var/lib/passforge/registrations.sqlite passforge serve --base-path /passes
              passforge serve --push                          also push each new build to devices

            With offers: in passforge.yml it also serves DeviceCheck offer claims
            (POST v1/offers/{offer}/claims); the .p8 key's path comes from deviceCheck.privateKey
            or PASSFORGE_DEVICECHECK_KEY.
            """
    )

    @OptionGroup var project: ProjectOptions

    @Option(help: ArgumentHelp("Address to listen on.", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("Port to listen on; 0 picks a free one.", valueName: "port"))
    var port = 8080

    @Option(
        help: ArgumentHelp("Prefix of every URL, e.g. /passes (default: the path of webServiceURL).", valueName: "path")
    )
    var basePath: String?

    @Option(help: ArgumentHelp("Requests per second allowed per client address; 0 means no limit.", valueName: "n"))
    var rateLimit = 0

    @Option(
        help: ArgumentHelp(
            "Registrations per minute allowed per client address (each may add a device folder and index file); 0 means no limit.",
            valueName: "n"))
    var registrationLimit = 300

    @Option(
        help: ArgumentHelp(
            "Seconds allowed to receive one request, headers and body; slower requests get 408.", valueName: "seconds"))
    var requestTimeout = 30

    @Option(
        help: ArgumentHelp(
            "Connections open at once; at the cap a new one closes the oldest idle or half-sent one "
                + "(default: the open-file limit, raised to its hard limit, less an eighth for the store "
                + "and the tree, at least 128; at most 16384).", valueName: "n"))
    var maxConnections: Int?

    @Option(
        help: ArgumentHelp(
            "trace, debug, info, notice, warning, error or critical (default: LOG_LEVEL, else info).",
            valueName: "level"))
    var logLevel: String?

    @Option(
        help: ArgumentHelp(
            "Offers: claims per minute allowed per client address (an IPv6 client by its /64); 0 means no limit.",
            valueName: "n"))
    var claimLimit = OfferClaimEndpoint.defaultClaimsPerMinute

    @Flag(
        help:
            "Push by itself: when a new build appears in the output tree, notify the devices holding its changed passes (as `passforge push`)."
    )
    var push = false

    @Option(
        help: ArgumentHelp(
            "Where the devices' lists come from: files (each registration writes the device's index file in the tree, for nginx or Caddy to serve) or store (no index files; serve answers the lists from the registration store: a tree in a bucket, several hosts). Default: PASSFORGE_DEVICE_LISTS, else files.",
            valueName: "files|store"))
    var deviceLists: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard rateLimit >= 0 else {
            throw ValidationError("--rate-limit must be 0 (off) or a positive number of requests per second")
        }
        guard registrationLimit >= 0 else {
            throw ValidationError(
                "--registration-limit must be 0 (off) or a positive number of registrations per minute")
        }
        guard (1...3600).contains(requestTimeout) else {
            throw ValidationError("--request-timeout must be 1…3600 seconds")
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be 1 or more") }
        guard claimLimit >= 0 else {
            throw ValidationError("--claim-limit must be 0 (off) or a positive number of claims per minute")
        }
        if let basePath, !basePath.utf8.allSatisfy({ PathRules.isUnreservedOrSlash($0) }) {
            throw ValidationError("--base-path may hold only letters, digits, '/', '.', '_', '~' and '-'")
        }
        do {
            _ = try DeviceListSource.resolve(option: deviceLists, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.description)
        }
        if let logLevel, Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        let level =
            Logger.Level(
                rawValue: (logLevel ?? ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info").lowercased())
            ?? .info
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: level) }
        let logger = Logger(label: "passforge.serve")

        // The process's one pool for work that blocks (index files, SQLite commits), passed to all of it.
        let pool = BlockingPool()
        guard let (store, storeDescription) = try await StoreOpening.open(project: project.project, pool: pool) else {
            throw ExitCode.failure
        }

        // The process's one output tree: the web service, the index refresh and `--push` share its index writer.
        let output = OutputFolder(directory: project.output, pool: pool)
        var configuration = PassServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.rateLimit = rateLimit
        configuration.registrationsPerMinute = registrationLimit
        configuration.requestReadTimeout = .seconds(Int64(requestTimeout))
        configuration.deviceLists = try await deviceListSource(output: output, logger: logger)
        let connections = try connectionCap()
        configuration.maximumConnections = connections.cap
        configuration.connectionCapOrigin = connections.origin
        // passforge.yml is read once, here: the base path, the offers and `--push`'s signing settings come from it.
        let projectConfiguration = try project.loadConfiguration()
        configuration.basePath = Route.normalizeBasePath(basePath ?? Self.webServicePath(projectConfiguration))
        do {
            configuration.offers = try DeviceCheckSetup.offerEndpoint(
                configuration: projectConfiguration, store: store, claimsPerMinute: claimLimit)
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }

        if !AtomicFileSystem.exists(BuildState.path(in: project.output)) {
            Console.error(
                "warning: \(project.output) has no build yet; run `passforge build` (serving starts anyway and picks it up)"
            )
        }
        let host = self.host
        let basePath = configuration.basePath
        var reactions: [any NewBuildReaction] =
            configuration.deviceLists == .files
            ? [IndexRefreshOnNewBuild(output: output, store: store, logger: logger)] : []
        if push {
            reactions.append(
                try pushOnNewBuild(
                    configuration: projectConfiguration, output: output, store: store, metrics: configuration.metrics,
                    logger: logger))
        }
        var services: [any Service] = []
        if let offers = configuration.offers {
            reactions.append(OfferPoolsOnNewBuild(store: store, logger: logger))
            services.append(SpentTokenPurger(service: offers.service, logger: logger))
        }
        do {
            try await PassServer.run(
                PassServer.application(
                    configuration: configuration, output: output, store: store, services: services,
                    reactions: reactions, logger: logger
                ) { boundPort in
                    Console.print(
                        Self.banner(
                            host: host, port: boundPort, basePath: basePath, output: output.directory,
                            store: storeDescription,
                            connections: connections.line))
                })
            await configuration.offers?.service.shutdown()
        } catch {
            await configuration.offers?.service.shutdown()
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
    }

    /// `--push`: after each new build, the devices holding a changed pass or order are told to fetch it.
    private func pushOnNewBuild(
        configuration: ProjectConfiguration, output: OutputFolder, store: any RegistrationDatabase,
        metrics: ServerMetrics, logger: Logger
    ) throws -> PushOnNewBuild {
        let settings = try project.settings(
            developmentSigning: false, allowHTTP: false, jobs: nil, configuration: configuration)
        let apns: APNsConfiguration
        do {
            apns = try APNsConfiguration.fromEnvironment()
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
        let operation = PushOperation(
            output: output, identities: SigningIdentities(settings: settings), store: store, configuration: apns,
            logger: logger)
        return PushOnNewBuild(operation: operation, logger: logger) { report in
            metrics.recordPushes(
                accepted: report.summary.succeeded, unregistered: report.summary.tokensInvalid,
                retried: report.summary.retries, pending: report.summary.leftPending)
        }
    }

    /// `--device-lists`, else PASSFORGE_DEVICE_LISTS, else files. With files, the indices of a tree
    /// written before the per-type folders move to `v1/devices/<type>/<device>` first (`migrateLegacyLayout`).
    private func deviceListSource(output: OutputFolder, logger: Logger) async throws -> DeviceListSource {
        let source = try DeviceListSource.resolve(option: deviceLists, environment: ProcessInfo.processInfo.environment)
        guard source == .files else { return source }
        do {
            let moved = try await output.indexFiles.migrateLegacyLayout()
            if moved > 0 {
                logger.info("moved \(moved) device index file\(moved == 1 ? "" : "s") to v1/devices/<type>/<device>")
            }
        } catch {
            Console.error(
                "error: cannot move the device index files of \(output.directory) to v1/devices/<type>/<device> (\(error)); "
                    + "give serve write access to v1/devices/ and .passforge/, then start it again")
            throw ExitCode.failure
        }
        return source
    }

    /// The open-file limit raised to its hard limit, and the connection cap below it (`--max-connections`, else
    /// `ConnectionLimit.defaultMaximum`): what the warning at the cap names, and the banner's line.
    private func connectionCap() throws -> (cap: Int, origin: String, line: String) {
        let files = OpenFileLimit.raiseToHardLimit()
        if let problem = files.problem {
            Console.error(
                "warning: cannot raise the open-file limit from \(files.before) to its hard limit "
                    + "(\(problem)); connections are capped below \(files.before)")
        }
        let limitText = files.after > files.before ? "raised from \(files.before) to \(files.after)" : "\(files.after)"
        let cap: Int
        if let maxConnections {
            guard maxConnections <= files.after - ConnectionLimit.minimumHeadroom else {
                let most = files.after - ConnectionLimit.minimumHeadroom
                Console.error(
                    "error: --max-connections \(maxConnections) leaves too few of the \(files.after) open files "
                        + "for the store and the tree: at most \(most). Raise the hard limit (LimitNOFILE= in the "
                        + "systemd unit, ulimit -Hn in a shell) or lower --max-connections")
                throw ExitCode.failure
            }
            cap = maxConnections
        } else {
            cap = ConnectionLimit.defaultMaximum(openFileLimit: files.after)
        }
        let origin = " (--max-connections \(cap); open-file limit \(files.after))"
        let line = "connections: at most \(cap) at once (open-file limit \(limitText); --max-connections sets it)"
        return (cap, origin, line)
    }

    /// The path of webServiceURL in passforge.yml (`https://h/passes/` → `/passes`).
    private static func webServicePath(_ configuration: ProjectConfiguration?) -> String? {
        guard let configured = configuration?.defaultValue("webServiceURL"),
            let url = URL(string: configured)
        else { return nil }
        return url.path
    }

    /// The URLs to try, with a real pass of the current build when there is one.
    static func banner(
        host: String, port: Int, basePath: String, output: String, store: String,
        connections: String? = nil
    ) -> String {
        let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
        let base = "http://\(shownHost):\(port)\(basePath)"
        var lines =
            [
                "passforge serve: listening on \(base)/",
                "  output tree: \(output)",
                "  registrations: \(store)",
            ] + (connections.map { ["  \($0)"] } ?? []) + [
                "try:",
                "  curl \(base)/health",
            ]
        if let index = try? PublishedIndex.load(from: output),
            let pass = index.items.values.min(by: { $0.key < $1.key })
        {
            lines.append("  curl -H 'Authorization: \(pass.kind.authorizationScheme) <token>' \(base)/\(pass.path)")
            lines.append("  curl \(base)/v1/devices/<deviceLibraryIdentifier>/registrations/\(pass.typeIdentifier)")
            lines.append(
                "  open \(base)/\(pass.downloadPath)   (add-to-Wallet link, no token; all links in \(output)/\(TreeLayout.downloadsListPath))"
            )
        } else {
            lines.append("  (no passes yet: run `passforge build`)")
        }
        lines.append("stop with Ctrl-C (SIGINT) or SIGTERM; requests in progress finish first")
        return lines.joined(separator: "\n")
    }
}
