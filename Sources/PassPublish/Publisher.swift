import AtomicFiles
package import ConcurrencySupport
import Foundation
import WalletTree

/// `passforge publish DEST`: carries the build-owned part of the output tree
/// (passes, token links, downloads, `.pkpasses` bundles, landing pages, build state) to a
/// destination, in an order that keeps the destination serveable at every moment:
///
/// 1. the files of new and changed passes and bundles, each landing whole, then those of their landing pages
///    (a page links its download, so the download is there first);
/// 2. bundles.json, downloads.csv, landing-pages.txt and state.json, which list only files that are now in place;
/// 3. the files of removed passes, bundles and landing pages.
///
/// Only passes and bundles whose record differs from the destination's are sent. The
/// destination's `v1/devices/` (written by the server there) is never
/// touched. A publish killed at any point leaves the destination serving the
/// previous build or the new one, and running it again completes it.
package struct Publisher: Sendable {
    package var outputDirectory: String
    package var destination: PublishDestination
    let transport: any PublishTransport
    let checkpoints: any Checkpoints

    /// `pool` runs the object storage client's work (the command's one `BlockingPool`); `checkpoints` are
    /// told each `PublishCheckpoint` as the publish passes it (tests look at the destination there).
    package init(
        outputDirectory: String, destination: PublishDestination,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        pool: BlockingPool = BlockingPool(threadCount: 4), checkpoints: any Checkpoints = NoCheckpoints()
    ) throws {
        let transport = try destination.makeTransport(environment: environment, pool: pool, checkpoints: checkpoints)
        self.init(
            outputDirectory: outputDirectory, destination: destination, transport: transport,
            checkpoints: checkpoints)
    }

    /// A publish through a given transport (tests use one that fails half-way).
    package init(
        outputDirectory: String, destination: PublishDestination, transport: any PublishTransport,
        checkpoints: any Checkpoints = NoCheckpoints()
    ) {
        self.outputDirectory = outputDirectory
        self.destination = destination
        self.transport = transport
        self.checkpoints = checkpoints
    }

    /// Publishes, or with `dryRun` only plans: the summary then says what
    /// would be sent and removed, and nothing is written at the destination.
    package func publish(dryRun: Bool = false, progress: @Sendable (PublishProgress) -> Void = { _ in }) throws
        -> PublishSummary
    {
        defer { transport.close() }
        let output = LocalOutput(directory: outputDirectory)
        guard AtomicFileSystem.exists(output.stateDirectory) else {
            throw PublishError(
                .noBuild, "\(outputDirectory) holds no build (no .passforge/); run passforge build first")
        }
        if case .directory(let path) = destination,
            URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: outputDirectory).resolvingSymlinksInPath().path
        {
            throw PublishError(.destinationIsOutput, "\(path) is the output tree itself; publish to another folder")
        }
        let lock = try output.lock(purpose: "publish")
        defer { lock.release() }
        guard let localBytes = AtomicFileSystem.readFile(BuildState.path(in: outputDirectory)) else {
            throw PublishError(
                .noBuild, "\(outputDirectory) holds no build (no \(TreeLayout.statePath)); run passforge build first")
        }
        let lists = try LocalLists(outputDirectory)

        let published = try fetchPublished(creatingDestination: !dryRun, output: output, localState: localBytes)
        let local = try published?.difference.local ?? output.allItems(localState: localBytes)
        let destinationLock = dryRun ? nil : try transport.lockDestination()
        defer { destinationLock?.release() }

        let plan = try plan(local: local, published: published, lists: lists) { () throws(PublishError) in
            try output.allItems(localState: localBytes)
        }
        try verifyLocalFiles(of: plan)
        let removals = plan.removals + lists.listsToRemove(at: published?.files)

        var summary = Self.summary(
            of: plan, lastUpdateTag: local.lastUpdateTag,
            removals: removals.count - plan.removedLandingFiles)
        let sendsBundleList = lists.bundlesJSON != nil && published?.files.bundlesJSON != lists.bundlesJSON
        let sendsLandingList = lists.landingList != nil && published?.files.landingPages != lists.landingList
        let sendsList = lists.csv == nil || published?.files.downloadsCSV != lists.csv
        let sendsState = published?.files.state != localBytes || sendsList || sendsBundleList || sendsLandingList
        progress(
            .planned(
                passes: plan.sentPasses, bundles: plan.sentBundles, files: plan.fileCount, removals: removals.count))
        if dryRun {
            summary.isDryRun = true
            summary.stateSent = sendsState
            summary.plannedUploads = plan.uploads.flatMap { [$0.path] + $0.links }
            summary.plannedRemovals = removals
            return summary
        }

        let total = plan.fileCount
        try transport.upload(plan.uploads, from: outputDirectory) { done in
            progress(.uploading(done: done, total: total))
        }
        checkpoints.reached(PublishCheckpoint.uploaded)

        if !removals.isEmpty { try transport.noteRemovals(removals) }
        if sendsState {
            progress(.sendingState)
            // Each list after the files it names, state.json (the one a server watches) last.
            let names =
                (sendsBundleList ? [BundleList.path] : []) + (sendsList ? [TreeLayout.downloadsListPath] : [])
                + (sendsLandingList ? [LandingPageList.path] : []) + [TreeLayout.statePath]
            try transport.uploadState(names, from: outputDirectory)
            summary.stateSent = true
        }
        checkpoints.reached(PublishCheckpoint.removing)

        if !removals.isEmpty {
            progress(.removing(files: removals.count))
            try transport.remove(removals, emptyFolders: plan.foldersToPrune)
        }
        return summary
    }

    /// The destination's published build, if any, compared with the local state (`localState`, its bytes);
    /// refused when it is newer than the local one. Creates the destination's folder when it is missing and
    /// `creatingDestination`.
    private func fetchPublished(creatingDestination: Bool, output: LocalOutput, localState: [UInt8]) throws
        -> (difference: StateDifference, files: PublishedBuild)?
    {
        var published: (difference: StateDifference, files: PublishedBuild)?
        switch try transport.fetchState() {
        case .missingFolder:
            if creatingDestination { try transport.createDestination() }
        case .noState:
            break
        case .published(let files):
            published = (try output.compare(localState: localState, with: files, from: destination), files)
        }
        if let difference = published?.difference,
            difference.destination.lastUpdateTag > difference.local.lastUpdateTag
        {
            throw PublishError(
                .newerAtDestination,
                "\(destination) holds a newer build (update tag \(difference.destination.lastUpdateTag)) than \(outputDirectory) (\(difference.local.lastUpdateTag)); build with --state-from \(destination) first, so that no pass goes back to an older version"
            )
        }
        return published
    }

    /// What to send and delete. Compared with a destination, `local` holds only the items that differ: the names
    /// every item uses (which a publish never deletes) are read from the whole state (`allLocalItems`) only when
    /// something may be deleted.
    private func plan(
        local: PublishedIndex, published: (difference: StateDifference, files: PublishedBuild)?, lists: LocalLists,
        allLocalItems: @escaping () throws(PublishError) -> PublishedIndex
    ) throws(PublishError) -> PublishPlan {
        let landing = try LandingComparison.difference(
            local: lists.landingList, destination: published?.files.landingPages, localOutput: outputDirectory)
        let (output, list) = (outputDirectory, lists.landingList)
        return try PublishPlan(
            local: local, destination: published?.difference.destination,
            allLocalItems: published == nil ? nil : allLocalItems,
            allLocalLanding: landing.isPartial
                ? { () throws(PublishError) in try LandingComparison(localOutput: output, bytes: list) } : nil,
            localBundles: lists.bundles,
            destinationBundles: BundleComparison(destination: published?.files.bundlesJSON),
            bundleFiles: published?.files.bundleFiles ?? [], localLanding: landing.local,
            destinationLanding: landing.destination, landingFiles: published?.files.landingFiles ?? [],
            notedRemovals: published?.files.notedRemovals ?? [])
    }

    /// The local build's lists besides its state: bundles.json (read and checked), landing-pages.txt and
    /// downloads.csv.
    private struct LocalLists {
        var bundlesJSON: [UInt8]?
        var bundles: BundleComparison
        /// landing-pages.txt, read (and checked) with the destination's (`LandingComparison.difference`).
        var landingList: [UInt8]?
        var csv: [UInt8]?

        init(_ output: String) throws {
            bundlesJSON = AtomicFileSystem.readFile(TreeLayout.path(BundleList.path, in: output))
            bundles = try BundleComparison(localOutput: output, bytes: bundlesJSON)
            landingList = AtomicFileSystem.readFile(TreeLayout.path(LandingPageList.path, in: output))
            csv = AtomicFileSystem.readFile(TreeLayout.path(TreeLayout.downloadsListPath, in: output))
        }

        /// A destination that lists bundles (landing pages) this build has none of: its list goes, after the files.
        func listsToRemove(at destination: PublishedBuild?) -> [String] {
            (bundlesJSON == nil && destination?.bundlesJSON != nil ? [BundleList.path] : [])
                + (landingList == nil && destination?.landingPages != nil ? [LandingPageList.path] : [])
        }
    }

    /// What `plan` sends and removes, before anything is sent.
    private static func summary(of plan: PublishPlan, lastUpdateTag: Int64, removals: Int) -> PublishSummary {
        var summary = PublishSummary()
        summary.lastUpdateTag = lastUpdateTag
        summary.passesSent = plan.sentPasses
        summary.filesSent = plan.passFileCount
        summary.bytesSent = plan.passByteCount
        summary.bundlesSent = plan.sentBundles
        summary.bundleBytesSent = plan.bundleByteCount
        summary.passesRemoved = plan.removedPasses
        summary.bundlesRemoved = plan.removedBundles
        summary.filesRemoved = removals
        summary.landingFilesSent = plan.sentLandingFiles
        summary.landingBytesSent = plan.landingByteCount
        summary.landingFilesRemoved = plan.removedLandingFiles
        return summary
    }

    /// Every file to send must be here and be the one the build state or
    /// bundle list describes: a tree that does not match its state is not published.
    private func verifyLocalFiles(of plan: PublishPlan) throws {
        for upload in plan.uploads {
            let path = TreeLayout.path(upload.path, in: outputDirectory)
            guard let bytes = AtomicFileSystem.readFile(path) else {
                throw PublishError(
                    .localTreeMismatch,
                    "\(path) is missing, but the build lists it as changed; run passforge build, then publish")
            }
            guard BuildState.etag(of: bytes) == upload.etag else {
                throw PublishError(
                    .localTreeMismatch,
                    "\(path) does not match the build state (another ETag); run passforge build, then publish")
            }
        }
    }
}

/// The points of a publish its `Checkpoints` are told of: what a publish killed there leaves at the
/// destination is what the kill tests check, and what the next publish must complete.
package enum PublishCheckpoint {
    /// Object storage only: the item files and token names landed, the download links and bundles not yet.
    package static let itemsUploaded = "items-uploaded"
    /// Every file landed; the lists and state.json not yet.
    package static let uploaded = "uploaded"
    /// The state is sent; the files of removed passes and bundles are still there.
    package static let removing = "removing"
}
