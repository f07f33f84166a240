import AtomicFiles
package import Logging
package import WalletTree
import ServiceLifecycle

/// The serve side of a build: a service that notices each new build in the
/// output tree — `state.json` is replaced by rename when a build commits,
/// locally or through `passforge publish` — and runs its reactions in order
/// (refresh the device indices, then push), once per build, and once at
/// start for a build that came while the server was stopped.
///
/// On graceful shutdown it stops waiting, lets the reactions in progress
/// finish (a cancelled store write would be abandoned), and shuts them down.
package struct NewBuildWatcher: Service {
    private let statePath: String
    private let outputDirectory: String
    private let reactions: [any NewBuildReaction]
    private let logger: Logger
    private let interval: Duration

    package init(outputDirectory: String, reactions: [any NewBuildReaction], logger: Logger, interval: Duration = .seconds(1)) {
        self.outputDirectory = outputDirectory
        self.statePath = BuildState.path(in: outputDirectory)
        self.reactions = reactions
        self.logger = logger
        self.interval = interval
    }

    package func run() async throws {
        var seen: FileStamp?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let build = FileStamp(path: statePath), build != seen {
                do {
                    let state = try BuildState.load(from: outputDirectory)
                    for reaction in reactions { await reaction.react(to: state) }
                } catch {
                    logger.error("cannot read the new build state \(statePath): \(error)")
                }
                seen = build
            }
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
        for reaction in reactions { await reaction.shutdown() }
    }
}
