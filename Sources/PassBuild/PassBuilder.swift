import AtomicFiles
import ConcurrencySupport
import Foundation
package import PassContent
import PassModel
import PassPackage
import Synchronization
import WalletTree

/// `passforge build` and `passforge validate`: content in, output tree out.
package struct PassBuilder: Sendable {
    package var settings: BuildSettings

    package init(settings: BuildSettings) { self.settings = settings }

    var tree: OutputTree { OutputTree(directory: settings.outputDirectory) }

    /// Validates every pass without signing or writing; returns the warnings.
    package func validate() throws -> [ContentDiagnostic] {
        let state = try BuildState.load(from: settings.outputDirectory)
        try Self.checkLoaded(state, output: settings.outputDirectory, jobs: settings.jobs)
        let secret = try TokenSecret.resolve(
            environment: settings.environment, projectStateDirectory: settings.projectStateDirectory)
        var planner = BuildPlanner(
            settings: settings, state: state, secret: secret,
            identities: SigningIdentities(settings: settings), consumer: Validator())
        let plan = try planner.makePlan(progress: { _ in })
        try PassBundles.checkUniqueNames(plan.bundles)
        return plan.warnings
    }

    /// Builds incrementally: only passes and orders whose inputs changed are signed again.
    /// On any content error nothing is written and every error is thrown at once.
    ///
    /// The phases, each timed (`--timings`), as DESIGN.md names them: load (finish an interrupted build, read
    /// the previous state); scan, classify, evaluate and sign, check (`BuildPlanner.makePlan`, whose consumer
    /// signs: `ParallelPackager`); then, when anything changed, commit: new state, bundles, landing pages,
    /// staged state and journal, and the tree's own steps (`OutputTree.commit`).
    package func build(progress: @escaping @Sendable (BuildProgress) -> Void = { _ in }) throws -> BuildReport {
        let started = Date()
        let timings = BuildTimings(
            isEnabled: settings.recordsTimings || settings.environment["PASSFORGE_BUILD_TIMES"] != nil)
        var report = BuildReport()
        let lock = try lockAndRollForward(&report, progress: progress)
        defer { lock.release() }
        var (state, previousFile) = try BuildState.loadWithRecordRanges(
            from: settings.outputDirectory, jobs: settings.jobs)
        try Self.checkLoaded(state, output: settings.outputDirectory, jobs: settings.jobs)
        let secret = try TokenSecret.resolve(
            environment: settings.environment, projectStateDirectory: settings.projectStateDirectory)
        let identities = SigningIdentities(settings: settings)
        let tag = try Self.updateTag(after: state.lastUpdateTag, now: Int64(started.timeIntervalSince1970 * 1000))
        timings.mark("load")

        var plan = try scanEvaluateAndSign(
            state: state, secret: secret, identities: identities, tag: tag, started: started,
            timings: timings, progress: progress)
        report.warnings = plan.warnings
        report.usedDevelopmentSigning = identities.usedDevelopmentSigning
        report.unchanged = plan.unchanged.count
        report.removed = plan.removed.map(\.key)
        // Passes built before token-keyed names existed get theirs now, without signing again.
        let legacyTokenLinks = Self.missingTokenLinks(plan.unchanged, of: state.passes, secret: secret)
        // Landing pages of unchanged items: a new configuration, or an item that expired since (`LandingPages`).
        let landingWork = LandingPages.needsWork(
            maker: settings.landingPages, output: settings.outputDirectory,
            itemCount: state.passes.count, now: started)
        // Only what content files define counts: their stamps alone (newly settled files) do not make a build write.
        if !plan.signed.isEmpty || !plan.removed.isEmpty || !plan.hasSameContent(as: state.contentFiles)
            || !legacyTokenLinks.isEmpty
            || landingWork
        {
            let context = CommitContext(
                legacyTokenLinks: legacyTokenLinks, secret: secret, tag: tag, started: started,
                timings: timings, progress: progress)
            try commit(&plan, over: &state, previousFile: &previousFile, context: context, report: &report)
        } else {
            report.offerPoolSizes = offerPoolSizes(of: state)
            report.committedState = state
            Self.releaseInBackground((state, plan))
            (state, plan) = (BuildState(), BuildPlan())
        }
        report.phases = timings.phases
        report.seconds = Date().timeIntervalSince(started)
        if settings.environment["PASSFORGE_BUILD_TIMES"] != nil { timings.reportOnStandardError() }
        return report
    }

    /// Takes the output folder's build lock and finishes a build that was interrupted after its journal.
    private func lockAndRollForward(_ report: inout BuildReport, progress: @Sendable (BuildProgress) -> Void) throws
        -> FileLock
    {
        try AtomicFileSystem.createDirectory(tree.stateDirectory)
        let lockPath = tree.path(TreeLayout.buildLockPath)
        guard let lock = try FileLock.acquire(lockPath, blocking: false) else {
            throw BuildError(
                .busy,
                "another passforge build is running on this output folder (\(lockPath) is locked); wait for it to finish"
            )
        }
        do {
            report.rolledForward = try tree.rollForward()
        } catch {
            lock.release()
            throw error
        }
        if report.rolledForward { progress(.note("finished the previous build, which was interrupted")) }
        return lock
    }

    /// Scan the content files, classify them (unchanged by stamp or hash, or to parse), evaluate each
    /// pass and order (render, Apple's rules, the certificate) and sign it, check across items (duplicate
    /// identifiers, token and serial changes, one kind per type identifier): one pipeline on every core
    /// (`BuildPlanner`), whose consumer of evaluated items is the signer (`ParallelPackager`), each item staged
    /// as soon as it is signed. A plan that fails leaves only staged files, removed here.
    private func scanEvaluateAndSign(
        state: BuildState, secret: TokenSecret, identities: SigningIdentities, tag: Int64, started: Date,
        timings: BuildTimings, progress: @escaping @Sendable (BuildProgress) -> Void
    ) throws -> BuildPlan {
        // Fewer heap trims between passes (see ProcessTuning).
        ProcessTuning.reduceHeapTrimming()
        let packager = ParallelPackager(tree: tree, signingTime: started, updateTag: tag)
        let flusher = StagedFileFlusher(stagingDirectory: tree.stagingDirectory)
        defer { flusher.stop() }
        do {
            var planner = BuildPlanner(
                settings: settings, state: state, secret: secret, identities: identities, consumer: packager)
            return try planner.makePlan(timings: timings, progress: progress)
        } catch {
            AtomicFileSystem.removeTree(tree.stagingDirectory)
            throw error
        }
    }

    /// What the commit needs besides the plan and the states.
    private struct CommitContext {
        var legacyTokenLinks: [BuildState.ItemRecord]
        var secret: TokenSecret
        var tag: Int64
        var started: Date
        var timings: BuildTimings
        var progress: @Sendable (BuildProgress) -> Void
    }

    /// The new state and what the journal does besides moving the signed items' staged files into place.
    private struct NewState {
        var state = BuildState()
        /// Records carried over as they are keep their bytes from the old state file; these changed.
        var rewritten = Set<String>()
        var operations: [OutputTree.Operation] = []
        /// The signed items, by key, with their staged files.
        var staged: [(key: String, stagedPath: String)] = []
        /// The content files in order: those reused are in the order of the last build's, which is theirs.
        var contentFileOrder: (ordered: [String], added: [String]) = ([], [])
    }

    /// Commit: the new state (the previous one's records, changed in place), the bundles, the landing pages,
    /// downloads.csv and the journal, staged; then the tree (`OutputTree.commit`: flush, journal, moves, the state last).
    private func commit(
        _ plan: inout BuildPlan, over state: inout BuildState, previousFile: inout PreviousStateFile?,
        context: CommitContext, report: inout BuildReport
    ) throws {
        report.updateTag = plan.signed.isEmpty ? nil : context.tag
        let orders = plan.signed.reduce(0) { $0 + ($1.record.kind == .order ? 1 : 0) }
        context.progress(.writing(passes: plan.signed.count - orders, orders: orders))
        var new = makeNewState(
            &plan, over: &state, keepsRewritten: previousFile != nil, context: context, report: &report)
        context.timings.mark("new state")
        let bundles = try bundleUpdate(plan, new: new, context: context)
        new.operations += bundles.moves + bundles.removals
        context.timings.mark("bundles")
        new.operations += try landingPageOperations(
            passes: new.state.passes, bundles: bundles.records, staged: new.staged,
            started: context.started, progress: context.progress)
        context.timings.mark("landing pages")
        let journal = try stageStateAndJournal(
            &new, removed: plan.removed, previousFile: &previousFile, csvRows: bundles.csvRows)
        context.timings.mark("staged state")
        try tree.commit(journal, jobs: settings.jobs) { point in
            context.timings.mark(point)
            settings.checkpoints.reached(point)
        }
        report.offerPoolSizes = offerPoolSizes(of: new.state)
        report.committedState = new.state
        Self.releaseInBackground((new.state, plan))
        (new.state, plan) = (BuildState(), BuildPlan())
    }

    /// The new state starts from the old one's items, changed in place: at 100,000 items a copy is tens of MB.
    /// The signed items' records move into it; the journal needs only their keys and staged files.
    private func makeNewState(
        _ plan: inout BuildPlan, over state: inout BuildState, keepsRewritten: Bool,
        context: CommitContext, report: inout BuildReport
    ) -> NewState {
        var new = NewState()
        new.state.lastUpdateTag = plan.signed.isEmpty && plan.removed.isEmpty ? state.lastUpdateTag : context.tag
        new.state.builtAt = iso8601(context.started)
        new.contentFileOrder = (plan.reusedFiles.map(\.path), Array(plan.contentFiles.keys))
        let previousContentFiles = state.contentFiles
        state.contentFiles = [:]
        plan.completeContentFiles(from: previousContentFiles)
        new.state.contentFiles = plan.contentFiles
        new.state.removedPasses = state.removedPasses
        new.state.passes = state.passes
        state.passes = [:]
        for record in plan.removed { new.state.passes[record.key] = nil }
        for record in context.legacyTokenLinks {
            new.state.passes[record.key] = record
            new.rewritten.insert(record.key)
            new.operations.append(.init(kind: .link, path: record.tokenPath!, source: record.path))
        }
        new.staged.reserveCapacity(plan.signed.count)
        new.state.passes.reserveCapacity(max(new.state.passes.count, plan.signed.count))
        report.built.reserveCapacity(plan.signed.count)
        // Each signed pass is let go of once its record is in the new state.
        plan.signed.reverse()
        while let pass = plan.signed.popLast() {
            let key = pass.record.key  // one string for the state, the report and the journal
            if let old = new.state.passes.updateValue(pass.record, forKey: key) {
                for name in Set(old.files).subtracting(pass.record.files).sorted() {
                    new.operations.append(.init(kind: .remove, path: name))
                }
            }
            if keepsRewritten { new.rewritten.insert(key) }
            if !new.state.removedPasses.isEmpty { new.state.removedPasses[key] = nil }
            report.built.append(key)
            new.staged.append((key, pass.stagedPath))
        }
        for record in plan.removed {
            if let tokenHash = record.tokenHash {
                new.state.removedPasses[record.key] = .init(
                    typeIdentifier: record.typeIdentifier, identifier: record.identifier,
                    tokenHash: tokenHash, removedTag: context.tag, files: record.files, kind: record.kind)
            }
            for name in record.files { new.operations.append(.init(kind: .remove, path: name)) }
        }
        return new
    }

    /// `.pkpasses` bundles of the new passes: made from the staged and kept files, moved into place with them.
    private func bundleUpdate(_ plan: BuildPlan, new: NewState, context: CommitContext) throws -> PassBundles.Update {
        do {
            let previousBundles = try PassBundles.loadChecked(from: settings.outputDirectory)
            let stagedPaths =
                plan.bundles.isEmpty && previousBundles.isEmpty
                ? [:] : Dictionary(new.staged.map { ($0.key, $0.stagedPath) }, uniquingKeysWith: { first, _ in first })
            let bundles = try PassBundles.update(
                declarations: plan.bundles, contentFiles: plan.contentFiles, passes: new.state.passes,
                stagedPaths: stagedPaths,
                previous: previousBundles, secret: context.secret, tree: tree,
                requiresLocalPassFiles: settings.requiresLocalPassFiles, updateTag: context.tag,
                signingTime: context.started)
            for note in bundles.notes { context.progress(.note(note)) }
            return bundles
        } catch {
            AtomicFileSystem.removeTree(tree.stagingDirectory)
            throw error
        }
    }

    /// The new state and downloads.csv, staged, and the journal that commits them: the staged items' files move
    /// into place first, then the rest. Each staged file already has the update tag as its modification time, so
    /// every name of it does.
    private func stageStateAndJournal(
        _ new: inout NewState, removed: [BuildState.ItemRecord], previousFile: inout PreviousStateFile?,
        csvRows: String
    ) throws -> OutputTree.Journal {
        try AtomicFileSystem.createDirectory(tree.stagingDirectory)
        let stagedState = "\(tree.stagingFolder)/\(TreeLayout.fileName(of: TreeLayout.statePath))"
        // The new items are the previous ones (their records' keys, in the file) but the removed, and the signed;
        // the content files, the reused ones (all kept) and the parsed.
        let keys = BuildStateEncoding.sortedKeys(
            of: new.state.passes, ordered: previousFile?.recordRanges.map(\.key) ?? [],
            removed: Set(removed.map(\.key)), added: new.staged.map(\.key))
        let contentFileKeys = BuildStateEncoding.sortedKeys(
            of: new.state.contentFiles, ordered: new.contentFileOrder.ordered, removed: [],
            added: new.contentFileOrder.added)
        try BuildStateEncoding.write(
            new.state, keys: keys, contentFileKeys: contentFileKeys, rewritten: new.rewritten,
            previous: previousFile, to: tree.path(stagedState), jobs: settings.jobs)
        // What only the state file needed goes before the journal is made (at 100,000 passes, tens of MB).
        (previousFile, new.rewritten) = (nil, [])
        var operations = Self.moves(ofStaged: new.staged.map(\.key), records: new.state.passes, into: tree)
        new.staged = []
        operations += new.operations
        new.operations = []
        let csv = new.state.downloadsCSV(keys: keys, jobs: settings.jobs, appending: csvRows)
        let stagedDownloadsList = try tree.stage(
            Array(csv.utf8), name: String(TreeLayout.fileName(of: TreeLayout.downloadsListPath)))
        return OutputTree.Journal(
            operations: operations, stagedState: stagedState, stagedDownloadsList: stagedDownloadsList)
    }

    /// The landing pages' operations (`LandingPages`): made from the staged and kept files, moved into place with them.
    private func landingPageOperations(
        passes: [String: BuildState.ItemRecord], bundles: [String: BundleRecord],
        staged: [(key: String, stagedPath: String)], started: Date,
        progress: @escaping @Sendable (BuildProgress) -> Void
    ) throws -> [OutputTree.Operation] {
        let previous = LandingPages.load(from: settings.outputDirectory)
        guard settings.landingPages != nil || previous != nil else { return [] }
        do {
            let stagedPaths = Dictionary(
                staged.map { ($0.key, $0.stagedPath) }, uniquingKeysWith: { first, _ in first })
            let update = try LandingPages.update(
                maker: settings.landingPages, previous: previous, passes: passes, bundles: bundles,
                stagedPaths: stagedPaths, tree: tree, now: started, jobs: settings.jobs)
            for note in update.notes { progress(.note(note)) }
            return update.operations
        } catch {
            AtomicFileSystem.removeTree(tree.stagingDirectory)
            throw error
        }
    }

    /// The moves of the staged items' files (`ParallelPackager`): a folder the output has none of yet moves
    /// whole (the staged one holds exactly this build's files of it), the others' files one by one.
    static func moves(ofStaged keys: [String], records: [String: BuildState.ItemRecord], into tree: OutputTree)
        -> [OutputTree.Operation]
    {
        let staged = keys.map { records[$0]! }
        /// Each name of each item (`ItemRecord.files`, as the workers staged them), with its place among the item's names.
        func forEachName(_ body: (_ name: String, _ slot: Int) -> Void) {
            for record in staged { record.forEachFile(body) }
        }
        // The folders first, then the files of those the output has: a first build moves no file on its own.
        // Items share their folders, so a name's folder is hashed only when it is not the one the same name
        // of the item before had.
        var folders = Set<Substring>()
        var lastFolders = [Substring](repeating: "", count: 4)
        forEachName { name, slot in
            let folder = TreeLayout.parentFolder(of: name)
            if folder != lastFolders[slot] {
                folders.insert(folder)
                lastFolders[slot] = folder
            }
        }
        let newFolders = Set(
            folders.filter { TreeLayout.isBuildOwnedFolder(String($0)) && !AtomicFileSystem.exists(tree.path($0)) })
        var operations = newFolders.sorted().map { folder in
            OutputTree.Operation(
                kind: .moveFolder, path: String(folder), source: TreeLayout.stagedPath(of: String(folder)))
        }
        guard newFolders.count < folders.count else { return operations }
        forEachName { name, _ in
            if !newFolders.contains(TreeLayout.parentFolder(of: name)) {
                operations.append(.init(kind: .move, path: name, source: TreeLayout.stagedPath(of: name)))
            }
        }
        return operations
    }

    /// Passes in each offer of passforge.yml (0 for an offer no pass names); empty without offers.
    private func offerPoolSizes(of state: BuildState) -> [String: Int] {
        guard !settings.configuration.offers.isEmpty else { return [:] }
        var sizes = Dictionary(uniqueKeysWithValues: settings.configuration.offers.map { ($0.name, 0) })
        for record in state.passes.values { if let offer = record.offer { sizes[offer, default: 0] += 1 } }
        return sizes
    }

    /// Lets another thread free what a build held: releasing 100,000 records
    /// one by one takes a tenth of a second or more, which the build's
    /// caller (and a command about to exit) need not wait for.
    /// The caller drops its own references right after.
    package static func releaseInBackground(_ value: some Sendable) {
        let box = ReleaseBox(value)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(20)) { box.release() }
    }

    /// The update-tag rule. The tag of a build at `now` (milliseconds) after one whose greatest tag was
    /// `last`: `now`, or `last + 1` when the clock did not move past it, moved to the next whole second
    /// when in the same second as `last`.
    ///
    /// Strictly greater than any before, so that a device's passesUpdatedSince (ordersModifiedSince)
    /// never misses a change, and an order's updatedAt strictly increases. An item's file carries its
    /// tag as modification time, and a static host's ETag and Last-Modified come from whole seconds of
    /// it: a tag in the same second as the last build's moves to the next second, so an item changed
    /// twice within a second never keeps its ETag. Never traps: a tag out of range (a state the check
    /// refused, were it not checked) is an error.
    static func updateTag(after last: Int64, now: Int64) throws -> Int64 {
        let (following, overflow) = last.addingReportingOverflow(1)
        guard last >= 0, now >= 0, !overflow else {
            throw BuildError(
                .refused,
                "the last update tag \(last) is out of range; delete the output folder's .passforge/ and build again")
        }
        let tag = max(now, following)
        guard last > 0, tag / 1000 == last / 1000 else { return tag }
        let (nextSecond, overflowed) = (tag / 1000 + 1).multipliedReportingOverflow(by: 1000)
        guard !overflowed else {
            throw BuildError(
                .refused,
                "the last update tag \(last) is out of range; delete the output folder's .passforge/ and build again")
        }
        return nextSecond
    }

    /// The checks of a state taken from a destination, on the local one too: a state fetched by an older
    /// passforge, or written by hand, must not make the build delete paths outside the tree. Its tags may be
    /// ahead of the clock (see `BuildState.greatestLocalTag`).
    static func checkLoaded(_ state: BuildState, output: String, jobs: Int) throws {
        do {
            try state.check(greatestTag: BuildState.greatestLocalTag, jobs: jobs)
        } catch {
            throw BuildError(
                .refused,
                "\(BuildState.path(in: output)) is refused: \(error). Delete \(output)/.passforge and build again (or build --state-from DEST)"
            )
        }
    }

    /// Unchanged passes with a web service but no token-keyed name yet (built
    /// by an earlier passforge), whose token is the derived one: their name
    /// can be made from the secret, and their bytes stay as they are.
    static func missingTokenLinks(
        _ unchanged: [String], of passes: [String: BuildState.ItemRecord], secret: TokenSecret
    ) -> [BuildState.ItemRecord] {
        // Passes without such a name are rare: looked for among the records in storage order, no key hashed.
        var withoutName = Set<String>()
        for (key, record) in passes where record.tokenPath == nil && record.tokenHash != nil { withoutName.insert(key) }
        guard !withoutName.isEmpty else { return [] }
        return unchanged.compactMap { key in
            guard withoutName.contains(key) else { return nil }
            guard let record = passes[key], record.tokenPath == nil, let tokenHash = record.tokenHash else {
                return nil
            }
            let token = secret.authenticationToken(
                passTypeIdentifier: record.typeIdentifier, serialNumber: record.identifier)
            guard sha256Hex(Array(token.utf8)) == tokenHash else { return nil }
            var linked = record
            linked.tokenPath = BuildState.ItemRecord.tokenPath(
                typeIdentifier: record.typeIdentifier, identifier: record.identifier, token: token)
            return linked
        }
    }
}

/// Reports signing progress at most a few times a second. Passes are signed
/// as they are planned, so how many will be is known only at the end: the
/// count runs against every pass being planned, and `finish` reports the
/// final number against itself.
final class ProgressThrottle: Sendable {
    private let progress = Mutex(Progress())
    private let total: Int
    private let report: @Sendable (BuildProgress) -> Void

    init(total: Int, report: @escaping @Sendable (BuildProgress) -> Void) {
        self.total = total
        self.report = report
    }

    private struct Progress {
        var done = 0
        var lastReport = Date()
    }

    /// One more pass signed.
    func step() {
        let snapshot: Int? = progress.withLock { progress in
            progress.done += 1
            let now = Date()
            guard now.timeIntervalSince(progress.lastReport) >= 0.5, progress.done < total else { return nil }
            progress.lastReport = now
            return progress.done
        }
        if let snapshot { report(.signing(done: snapshot, total: total)) }
    }

    /// Reports the number signed, when there were any.
    func finish() {
        let done = progress.withLock { $0.done }
        if done > 0 { report(.signing(done: done, total: done)) }
    }
}

/// Holds a value until `release` is called, from whichever thread.
private final class ReleaseBox<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>
    init(_ value: consuming Value) { self.value = Mutex(value) }
    func release() { value.withLock { $0 = nil } }
}
