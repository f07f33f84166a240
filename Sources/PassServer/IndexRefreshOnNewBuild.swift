package import Logging
package import RegistrationStore
package import WalletTree

/// Rewrites the index files of the devices holding passes a new build
/// changed or removed, so that a static host serving those files follows
/// builds that `passforge publish` carried to this tree.
package struct IndexRefreshOnNewBuild: NewBuildReaction {
    private let files: DeviceIndexFiles
    private let store: any RegistrationStore
    private let logger: Logger

    /// `output`: the process's one output tree, whose index writer the web service's registrations share.
    package init(output: OutputFolder, store: any RegistrationStore, logger: Logger) {
        files = output.indexFiles
        self.store = store
        self.logger = logger
    }

    package func react(to build: PublishedIndex) async {
        do {
            let count = try await files.refresh(publishedBuild: build, store: store)
            if count > 0 {
                logger.info(
                    "new build \(build.lastUpdateTag): refreshed \(count) device index file\(count == 1 ? "" : "s")")
            }
        } catch {
            logger.error(
                "new build \(build.lastUpdateTag): the device index files could not be refreshed (\(error)); the next build or registration refreshes them"
            )
        }
    }
}
