import AtomicFiles
package import ConcurrencySupport
import Foundation
import WalletTree

/// What `passforge build --state-from DEST` found at DEST.
package enum StateFetchOutcome: Sendable, Equatable {
    /// DEST has no build state: a first deploy, building every pass is right.
    case destinationHasNoState
    /// DEST's state, downloads list and bundle list replaced the local ones (there were none, or older ones).
    case fetched(lastUpdateTag: Int64)
    /// The local state is as new as DEST's or newer, and was kept.
    case keptLocal(lastUpdateTag: Int64)

    package var destinationHadState: Bool { self != .destinationHasNoState }
}

extension PublishDestination {
    /// Copies DEST's `.passforge/state.json`, `bundles.json` and `landing-pages.txt` into the local
    /// output's `.passforge/`, with a `downloads.csv` made from them, each
    /// atomically, when the local output has no state or an older one (by last
    /// update tag), so that a build in a fresh clone signs only what changed
    /// since the published build.
    ///
    /// DEST's host is not trusted: what it sends is decoded and checked in
    /// memory (`BuildState.decodePublished`: paths build-owned, keys, patterns,
    /// tags, size) before anything is written, and a state that fails is
    /// refused whole, with the local `.passforge/` left as it was.
    ///
    /// A DEST folder that does not exist is an error rather than a first
    /// deploy: a mistyped path must not re-sign every pass.
    package func fetchState(
        into outputDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        pool: BlockingPool = BlockingPool(threadCount: 4)
    ) throws -> StateFetchOutcome {
        let transport = try makeTransport(environment: environment, pool: pool)
        defer { transport.close() }
        let output = LocalOutput(directory: outputDirectory)
        let lock = try output.lock(purpose: "build --state-from")
        defer { lock.release() }
        switch try transport.fetchState() {
        case .missingFolder:
            throw PublishError(
                .destinationMissing,
                "\(self) does not exist; for a first deploy create it (mkdir -p), or build with --initial")
        case .noState:
            return .destinationHasNoState
        case .published(let files):
            let published = try output.decodePublished(files, from: self)
            let localPath = BuildState.path(in: outputDirectory)
            if AtomicFileSystem.exists(localPath) {
                let local = try PublishedIndex.load(from: outputDirectory)
                if local.lastUpdateTag >= published.state.lastUpdateTag {
                    return .keptLocal(lastUpdateTag: local.lastUpdateTag)
                }
            }
            // The bundle list too: the build keeps a bundle whose members are unchanged (their files are only at DEST).
            // And the landing page list: the build keeps the pages of unchanged items (only at DEST too), which a
            // publish would otherwise delete. A damaged one is left out: the build then makes every page it can.
            let landing = files.landingPages.flatMap { LandingPageList(decoding: $0) == nil ? nil : $0 }
            for (name, bytes) in [
                (BundleList.path, published.bundlesJSON), (TreeLayout.downloadsListPath, published.downloadsCSV),
                (LandingPageList.path, landing),
            ] {
                let path = TreeLayout.path(name, in: outputDirectory)
                if let bytes { try AtomicFileSystem.write(bytes, to: path) } else { try AtomicFileSystem.remove(path) }
            }
            try AtomicFileSystem.write(files.state, to: localPath)
            return .fetched(lastUpdateTag: published.state.lastUpdateTag)
        }
    }
}

/// The rule that keeps a CI run from re-signing every pass by accident.
package enum FreshBuildGuard {
    /// Why a build must not start, or nil when it may.
    ///
    /// Under `CI=true`, a build with no previous state would give every pass
    /// a new update tag and ETag, so every device would be pushed and fetch
    /// every pass again. It is refused unless `--initial` is given or
    /// `--state-from` found no state at DEST (a first deploy).
    package static func refusal(
        environment: [String: String], outputDirectory: String, isInitial: Bool,
        stateFetch: StateFetchOutcome?
    ) -> String? {
        guard environment["CI"] == "true", !isInitial, stateFetch != .destinationHasNoState,
            !AtomicFileSystem.exists(BuildState.path(in: outputDirectory))
        else { return nil }
        return
            "\(outputDirectory) has no previous build state and CI=true: this would re-sign every pass with new update tags and push every device; pass --state-from DEST (the published tree) or --initial for a first deploy"
    }
}
