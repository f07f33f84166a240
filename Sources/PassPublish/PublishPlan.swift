import WalletTree

/// What a publish sends and deletes: the difference between the local build
/// and the destination's, pass by pass and bundle by bundle.
struct PublishPlan: Sendable {
    /// The files to send: passes first, then bundles.
    var uploads: [FileUpload] = []
    /// Files to delete after the state is sent: those of passes, then bundles.
    var removals: [String] = []
    /// Pass-type folders that may be left empty by the removals.
    var foldersToPrune: [String] = []
    /// Passes to send.
    var sentPasses = 0
    /// Passes the destination lists and the local build does not.
    var removedPasses = 0
    var sentBundles = 0
    var removedBundles = 0
    /// Landing page files (pages, logos, badges) to send, after the bundles; and to delete, after the bundles'.
    var sentLandingFiles = 0
    var removedLandingFiles = 0

    /// A pass is sent when the destination has no record of it, or one with
    /// another ETag, update tag or set of files. Deleted: the files of passes
    /// the destination lists and the local build does not, the files a pass
    /// no longer has, and the files of the passes the local build removed
    /// since the destination's build — again, in case a publish was killed
    /// between sending the state and deleting them.
    ///
    /// A bundle is sent when the destination lists none of its name, or one
    /// with another path, ETag or size. Deleted: every bundle file the
    /// destination lists or holds (`bundleFiles`) that the local build does
    /// not list.
    ///
    /// A landing file (page, logo, badge) is sent when the destination's list has none of its path, or one
    /// with another ETag or size, after every item and bundle (a page links its download). Deleted: every
    /// landing file the destination lists or holds (`landingFiles`) that the local list does not name.
    ///
    /// `allLocalItems`, when given, is the whole local build and `local` a part of it (the items that differ from
    /// the destination's, `StateDifference`): it is read only when something may be deleted, to keep every name
    /// the build still uses. `allLocalLanding` likewise, when `localLanding` holds only the pages that differ.
    init(
        local: PublishedIndex, destination: PublishedIndex?,
        allLocalItems: (() throws(PublishError) -> PublishedIndex)? = nil,
        allLocalLanding: (() throws(PublishError) -> LandingComparison)? = nil,
        localBundles: BundleComparison = BundleComparison(),
        destinationBundles: BundleComparison = BundleComparison(), bundleFiles: [String] = [],
        localLanding: LandingComparison = LandingComparison(),
        destinationLanding: LandingComparison = LandingComparison(), landingFiles: [String] = [],
        notedRemovals: [String] = []
    ) throws(PublishError) {
        for key in local.sortedKeys {
            let record = local.items[key]!
            let files = PassFiles(record)
            let previous = destination?.items[key]
            let previousFiles = previous.map(PassFiles.init)
            if let previous, let previousFiles, previous.etag == record.etag, previous.updateTag == record.updateTag,
                previousFiles == files
            {
                continue
            }
            let existing = Set(previousFiles?.allPaths ?? [])
            uploads.append(
                FileUpload(
                    path: files.passPath, newLinks: files.linkPaths.filter { !existing.contains($0) },
                    replacedLinks: files.linkPaths.filter(existing.contains), size: record.size, etag: record.etag))
            if let previousFiles {
                removals += previousFiles.allPaths.filter { !files.allPaths.contains($0) }
            }
        }
        sentPasses = uploads.count
        if let destination {
            for key in destination.sortedKeys where local.items[key] == nil {
                removals += PassFiles(destination.items[key]!).allPaths
                removedPasses += 1
            }
        }
        let since = destination?.lastUpdateTag ?? 0
        for key in local.removedItems.keys.sorted() where local.removedItems[key]!.removedTag >= since {
            removals += PassFiles.paths(of: local.removedItems[key]!)
        }
        // Never delete a name the local build still uses: every item's and bundle's, made only when needed.
        var keptNames: Set<String>?
        func kept() throws(PublishError) -> Set<String> {
            if let keptNames { return keptNames }
            let items = try allLocalItems?() ?? local
            let landing = try allLocalLanding?() ?? localLanding
            let names = Set(items.items.values.flatMap { PassFiles($0).allPaths }).union(localBundles.downloadPaths)
                .union(landing.files.keys)
            keptNames = names
            return names
        }
        if !removals.isEmpty {
            var seen = Set<String>()
            let kept = try kept()
            removals = removals.filter { !kept.contains($0) && seen.insert($0).inserted }
        }
        try planBundles(
            local: localBundles, destination: destinationBundles, filesAtDestination: bundleFiles, kept: kept)
        try planLanding(
            local: localLanding, destination: destinationLanding, filesAtDestination: landingFiles, kept: kept)
        // A note is the destination's: only its build-owned names this build does not use are taken.
        var noted = Set(notedRemovals.filter(TreePath.isBuildOwned)).subtracting(localLanding.files.keys)
        if !noted.isEmpty { noted.subtract(try kept()) }
        removals += noted.subtracting(removals).sorted()
        for upload in uploads {
            try TreePath.check(upload.path)
            for link in upload.links { try TreePath.check(link) }
        }
        for path in removals { try TreePath.check(path) }
        foldersToPrune = Set(removals.compactMap(Self.passTypeFolder)).sorted()
    }

    private mutating func planBundles(
        local: BundleComparison, destination: BundleComparison, filesAtDestination: [String],
        kept: () throws(PublishError) -> Set<String>
    ) throws(PublishError) {
        for name in local.bundles.keys.sorted() {
            let bundle = local.bundles[name]!
            if let previous = destination.bundles[name], previous.downloadPath == bundle.downloadPath,
                previous.etag == bundle.etag, previous.size == bundle.size
            {
                continue
            }
            uploads.append(FileUpload(path: bundle.downloadPath, size: bundle.size, etag: bundle.etag))
            sentBundles += 1
        }
        // A listed file that is not a bundle path is a damaged list (refused
        // below); a stray file in download/ that is not one is not ours.
        var stale = destination.downloadPaths.union(
            filesAtDestination.filter { $0.hasSuffix(".pkpasses") && TreePath.isBuildOwned($0) }
        ).subtracting(local.downloadPaths)
        if !stale.isEmpty { stale.subtract(try kept()) }
        removals += stale.sorted()
        removedBundles = stale.count
    }

    private mutating func planLanding(
        local: LandingComparison, destination: LandingComparison,
        filesAtDestination: [String], kept: () throws(PublishError) -> Set<String>
    ) throws(PublishError) {
        let sent = local.uploads(over: destination)
        uploads += sent
        sentLandingFiles = sent.count
        let held = filesAtDestination.filter(LandingComparison.isLandingFile)
        var stale = Set(destination.files.keys).union(held).subtracting(local.files.keys).subtracting(removals)
        if !stale.isEmpty { stale.subtract(try kept()) }
        removals += stale.sorted()
        removedLandingFiles = stale.count
    }

    /// Files landed at the destination by the uploads, links included.
    var fileCount: Int { uploads.reduce(0) { $0 + $1.fileCount } }
    /// Bytes of the pass files to send.
    var passByteCount: Int { uploads.prefix(sentPasses).reduce(0) { $0 + $1.size } }
    var passFileCount: Int { uploads.prefix(sentPasses).reduce(0) { $0 + $1.fileCount } }
    var bundleByteCount: Int { uploads.dropFirst(sentPasses).prefix(sentBundles).reduce(0) { $0 + $1.size } }
    var landingByteCount: Int { uploads.suffix(sentLandingFiles).reduce(0) { $0 + $1.size } }

    /// `v1/passes/T/S` → `v1/passes/T`, `by-token/T/x` → `by-token/T`,
    /// `download/T/S.pkpass` → `download/T`; nil for `download/<capability>.pkpass(es)`.
    static func passTypeFolder(of path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count >= 3 else { return nil }
        return parts.dropLast().joined(separator: "/")
    }
}
