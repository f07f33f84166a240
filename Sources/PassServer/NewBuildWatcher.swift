import AtomicFiles
package import Logging
import ServiceLifecycle
package import WalletTree

/// The serve side of a build: a service that notices each new build in the
/// output tree — `state.json` is replaced by rename when a build commits,
/// locally or through `passforge publish` — and runs its reactions in order
/// (refresh the device indices, then push), once per build, and once at
/// start for a build that came while the server was stopped.
///
/// On graceful shutdown it stops waiting, lets the reactions in progress
/// finish (a cancelled store write would be abandoned), and shuts them down.
///
/// The state is parsed once per build, by the tree (`PublishedTree.reloadIfChanged`, on the blocking
/// pool), and the reactions get the very state the requests are answered from.
package struct NewBuildWatcher: Service {
    private let tree: PublishedTree
    private let reactions: [any NewBuildReaction]
    private let interval: Duration

    package init(tree: PublishedTree, reactions: [any NewBuildReaction], interval: Duration = .milliseconds(250)) {
        self.tree = tree
        self.reactions = reactions
        self.interval = interval
    }

    package func run() async throws {
        var seen: FileStamp?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await tree.reloadOffTheCooperativePool()
            let (stamp, index) = tree.installed
            if let stamp, stamp != seen {
                for reaction in reactions { await reaction.react(to: index) }
                seen = stamp
            }
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
        for reaction in reactions { await reaction.shutdown() }
    }
}
