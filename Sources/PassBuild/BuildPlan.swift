import AtomicFiles
import ConcurrencySupport
import Foundation
import PassContent
import PassModel
import PassPackage
import PassRender
import Synchronization
import WalletTree

/// A pass that has to be (re)packaged and signed.
struct PackagingJob: Sendable {
    var record: BuildState.ItemRecord
    /// The serialized pass.json.
    var passJSON: [UInt8]
    /// The template's files, prepared once for all its passes.
    var templateFiles: [PreparedPassFile]
    /// The pass's own files (its images), prepared when it is packaged.
    var ownFiles: [PackageFile]
    var identity: SigningIdentities.Resolved
}

/// What a build will do, decided before anything is committed.
struct BuildPlan: Sendable {
    /// Passes to sign, when the plan was made without a packager.
    var jobs: [PackagingJob] = []
    /// Passes signed and staged while planning, in content order.
    var signed: [SignedPass] = []
    /// Each sound item as it would be signed, in content order, when the planner collects renders.
    var unsigned: [UnsignedPass] = []
    /// Keys of the passes whose inputs did not change: their records carry over as they are.
    var unchanged: [String] = []
    var removed: [BuildState.ItemRecord] = []
    /// The records of the content files that were parsed or cut into entries;
    /// `completeContentFiles` adds those of `reusedFiles`.
    var contentFiles: [String: BuildState.ContentFileRecord] = [:]
    /// Files as the last build read them, with their stamps now: their records
    /// are copied only when the build writes a new state (at 100,000 files, tens of MB).
    var reusedFiles: [(path: String, stamp: String?)] = []
    var warnings: [ContentDiagnostic] = []
    /// Content file → the `.pkpasses` bundle it declares, for the files parsed in this build (see `PassBundles`).
    var bundles: [String: BundleDeclaration] = [:]
}

extension BuildPlan {
    /// Whether the content files define the same passes from the same bytes as `previous` (stamps aside).
    func hasSameContent(as previous: [String: BuildState.ContentFileRecord]) -> Bool {
        reusedFiles.count + contentFiles.count == previous.count
            && contentFiles.allSatisfy { path, record in
                previous[path].map { $0.hash == record.hash && $0.passes == record.passes } ?? false
            }
    }

    /// Adds the records of the reused files to `contentFiles`, from the previous state.
    ///
    /// When every previous file is still there (reused or parsed), the previous records are kept in
    /// place instead of copied one by one: give `previous` up (no other reference) and it is not copied at all.
    mutating func completeContentFiles(from previous: consuming [String: BuildState.ContentFileRecord]) {
        let parsedBefore = contentFiles.keys.reduce(0) { $0 + (previous.index(forKey: $1) == nil ? 0 : 1) }
        if reusedFiles.count + parsedBefore == previous.count {
            var all = previous
            for (path, stamp) in reusedFiles {
                let index = all.index(forKey: path)!
                if all.values[index].stamp != stamp { all.values[index].stamp = stamp }
            }
            for (path, record) in contentFiles { all[path] = record }
            (contentFiles, reusedFiles) = (all, [])
            return
        }
        contentFiles.reserveCapacity(contentFiles.count + reusedFiles.count)
        for (path, stamp) in reusedFiles {
            var record = previous[path]!
            record.stamp = stamp
            contentFiles[path] = record
        }
        reusedFiles = []
    }
}

/// Collects diagnostics; the same problem found in many passes (a template
/// image that is too large, say) is reported once, with a count.
struct DiagnosticCollector {
    private(set) var diagnostics: [ContentDiagnostic] = []
    private var seen: [String: Int] = [:]
    private var repeats: [Int] = []

    mutating func add(_ diagnostic: ContentDiagnostic) {
        let key =
            "\(diagnostic.location)|\(diagnostic.keyPath?.description ?? "")|\(diagnostic.rule)|\(diagnostic.message)"
        if let index = seen[key] {
            repeats[index] += 1
            return
        }
        seen[key] = diagnostics.count
        diagnostics.append(diagnostic)
        repeats.append(1)
    }

    mutating func add(_ diagnostics: [ContentDiagnostic]) {
        for diagnostic in diagnostics { add(diagnostic) }
    }

    var hasErrors: Bool { diagnostics.contains(where: \.isError) }

    /// Diagnostics sorted by file and line, repeated ones with "(in N passes)".
    var report: [ContentDiagnostic] {
        zip(diagnostics, repeats).map { diagnostic, count in
            var diagnostic = diagnostic
            if count > 1 { diagnostic.message += " (in \(count) passes)" }
            return diagnostic
        }.sorted {
            ($0.location.file, $0.location.line, $0.location.column) < (
                $1.location.file, $1.location.line, $1.location.column
            )
        }
    }
}

/// Decides, for every pass, whether it is unchanged, new, changed or gone,
/// and validates everything it renders. Reports every problem at once.
///
/// Phases, each on every core but the last: read and hash every content
/// file; check that the passes of unchanged files keep their fingerprints
/// (such a file is not even parsed); parse the other files (a large list of
/// passes in runs of entries), render and validate their definitions — and,
/// given a packager, sign and stage each new or changed pass at once, so that
/// parsing, rendering, signing and writing form one pipeline, and a parsed
/// definition lives only until its pass is signed. Last, in content order, the checks that span passes
/// (duplicate serials, token and serial changes). A pass staged by a build
/// that then fails is never committed.
struct BuildPlanner {
    let settings: BuildSettings
    let state: BuildState
    let evaluator: PassEvaluator
    /// What becomes of each evaluated item: signed (the build), kept as a render (preview, diff), only
    /// checked (validate), or kept as a job (a plan made to be looked at).
    let consumer: any ItemConsumer
    /// Whether the plan reads the previous state's records of content files (not when it only validates or renders).
    private var usesPreviousState: Bool { consumer.product == .job }

    private var collector = DiagnosticCollector()
    private var plan = BuildPlan()
    /// key → where it is defined, for duplicate serials.
    private var defined: [String: SourceLocation] = [:]
    /// Type identifier → the kind of item its first entry is, and where: passes and orders share the
    /// namespace of `by-token/` and the device indices, so one identifier cannot name both.
    private var kindsByType: [Substring: (kind: WalletItemKind, location: SourceLocation)] = [:]
    /// How many of the keys in `defined` the previous state has: when all of them, no pass was removed.
    private var definedBefore = 0

    /// The content files the plan listed, in order.
    private(set) var listedFiles: [String] = []
    /// What the planner collected of each sound item, when its consumer keeps renders (even when the plan failed).
    var collectedRenders: [UnsignedPass] { plan.unsigned }

    init(
        settings: BuildSettings, state: BuildState, secret: TokenSecret, identities: SigningIdentities,
        consumer: any ItemConsumer
    ) {
        self.settings = settings
        self.state = state
        self.consumer = consumer
        self.evaluator = PassEvaluator(
            settings: settings, state: state, secret: secret, identities: identities,
            templates: TemplateCache(loader: settings.templateLoader),
            product: consumer.product, updateTag: consumer.signingTag)
    }

    /// A content file as read: its hash, and its bytes while they may still need parsing.
    private struct ReadFile: Sendable {
        var path: String
        var bytes: [UInt8]?
        var hash = ""
        /// The previous record of the file, when its bytes are the same.
        var previous: BuildState.ContentFileRecord?
        /// Its stamp as the state keeps it, when it is settled (see `FileStamp`).
        var stamp: String?
        /// Why the file was not read, when it was not.
        var refusal: ProjectBoundary.Refusal?
        /// A changed file with `passes:`, cut into entries, and the keys of
        /// the entries that are as the last build read them, by entry.
        var list: PassListEntries?
        var reusedEntries: [Int: String] = [:]
    }

    /// A content file to parse, as the workers find it.
    private struct ParseFile: Sendable {
        var path: String
        var hash: String
        var stamp: String?
        var bytes: [UInt8]?
        /// Why it cannot be parsed (it cannot be read).
        var problems: [ContentDiagnostic] = []
        /// A file with `passes:` parsed in `runs` of entries, or of which only the entries not in
        /// `reusedEntries` are parsed.
        var list: PassListEntries?
        var runs: [Range<Int>]?
        var reusedEntries: [Int: String] = [:]
        /// For a file with `passes:`: its signature, and per entry the key of a
        /// reused one (nil for the entries that are parsed).
        var entries: String?
        var layout: [String?]?

        /// How many passes its parse should give, for the progress shown.
        var expectedPasses: Int {
            guard let list else { return 1 }
            return list.entries.count - reusedEntries.count
        }
    }

    /// Entries of a list parsed together: enough that the part before `passes:`, parsed with each run,
    /// costs little; few enough that a run's definitions take little memory and 10,000 entries make many runs.
    static let runLength = 250

    /// The runs a list of `count` entries is parsed and evaluated in: `runLength` entries, then shorter ones
    /// towards its end (down to `shortestRun`), so that the workers finish together: a worker that takes
    /// the last long run would sign its 250 passes (some 80 ms) while the others wait.
    static func runs(of count: Int, jobs: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = 0
        while start < count {
            let length = min(runLength, max(shortestRun, (count - start) / (4 * max(jobs, 1))))
            runs.append(start..<min(count, start + length))
            start += length
        }
        return runs
    }

    static let shortestRun = 16

    /// A unit of the workers' work: a whole file, or a run of the entries of a file with `passes:`.
    private struct ParseUnit: Sendable {
        var file: Int
        var run: Range<Int>?
    }

    /// What a unit gave: its problems and the evaluation of each definition, in order.
    private struct ParsedUnit: Sendable {
        var problems: [ContentDiagnostic] = []
        var evaluations: [PlannedPass] = []
        var bundle: BundleDeclaration?
        var firstSerial: (number: String, location: SourceLocation)?
        var signedCount = 0
    }

    /// What the checks that span passes need of an evaluation, kept small: every pass's waits
    /// until the last one is signed (an evaluation, with room for two records, takes about 1 KB).
    private struct PlannedPass: Sendable {
        var diagnostics: [ContentDiagnostic]
        var key: String?
        var serialLocation: SourceLocation
        var tokenLocation: SourceLocation
        var tokenHash: String?
        var isUnchanged: Bool
        var kind: WalletItemKind
        var unsigned: UnsignedPass?
        var outcome: Outcome?

        enum Outcome: Sendable {
            /// To sign, when the plan is made without a packager (boxed: it is large).
            indirect case job(PackagingJob)
            case signed(Result<SignedPass, any Error>)
        }

        init(_ evaluation: PassEvaluator.Evaluation) {
            diagnostics = evaluation.diagnostics
            key = evaluation.key
            serialLocation = evaluation.serialLocation
            tokenLocation = evaluation.tokenLocation
            tokenHash = evaluation.tokenHash
            isUnchanged = evaluation.unchanged != nil
            kind = evaluation.kind ?? .pass
            unsigned = evaluation.unsigned
            outcome = evaluation.signed.map { .signed($0) } ?? evaluation.job.map { .job($0) }
        }
    }

    /// Reads a file skipped by its stamp, now that it has to be parsed, and decides how to cut it.
    private static func prepare(_ file: ReadFile, keepsEntries: Bool, boundary: ProjectBoundary, jobs: Int) -> ParseFile
    {
        let bytes: [UInt8]
        switch file.bytes.map({ .success($0) }) ?? boundary.readListedFile(file.path) {
        case .success(let read): bytes = read
        case .failure(let refusal):
            return ParseFile(
                path: file.path, hash: file.hash, problems: [unreadable(file.path, refusal, boundary: boundary)])
        }
        let hash = file.bytes == nil ? sha256Hex(bytes) : file.hash
        var prepared = ParseFile(path: file.path, hash: hash, stamp: hash == file.hash ? file.stamp : nil, bytes: bytes)
        if let list = file.list, !file.reusedEntries.isEmpty {
            prepared.list = list
            prepared.reusedEntries = file.reusedEntries
            prepared.layout = list.entries.indices.map { file.reusedEntries[$0] }
            prepared.entries = list.signature
        } else if isYAML(file.path), let list = file.list ?? PassListEntries(bytes) {
            if keepsEntries { prepared.entries = list.signature }
            let runs = Self.runs(of: list.entries.count, jobs: jobs)
            if runs.count > 1 {
                prepared.list = list
                prepared.runs = runs
            }
        }
        return prepared
    }

    /// Parses a unit of work into its definitions.
    private static func parse(_ unit: ParseUnit, of file: ParseFile, sources: ResultSlots<[UInt8]>) -> (
        [PassDefinition], ParsedUnit
    ) {
        var parsed = ParsedUnit(problems: file.problems)
        guard file.problems.isEmpty else { return ([], parsed) }
        let definitions: [PassDefinition]
        if let run = unit.run, let list = file.list {
            let excerpt = list.excerpt(run, of: sources[unit.file]!)
            (definitions, parsed.problems) = ContentLoader.definitions(
                in: file.path, excerpt: excerpt.bytes, firstEntry: run.lowerBound,
                excerptEntryLine: excerpt.excerptEntryLine, entryLine: excerpt.entryLine)
        } else if let list = file.list, !file.reusedEntries.isEmpty {
            let bytes = sources.take(unit.file)!
            // Only the entries that changed; the others are blank lines.
            let kept = Set(list.entries.indices.filter { file.reusedEntries[$0] == nil })
            (definitions, parsed.problems) = ContentLoader.definitions(
                in: file.path, bytes: list.document(keeping: kept, of: bytes))
            if !parsed.problems.isEmpty {
                // Problems are reported from the whole file, so that they name each entry by its place in the list.
                parsed.problems = ContentLoader.definitions(in: file.path, bytes: bytes).problems
            }
        } else {
            (definitions, parsed.problems) = ContentLoader.definitions(in: file.path, bytes: sources.take(unit.file)!)
        }
        parsed.bundle = definitions.first?.bundle
        parsed.firstSerial = definitions.first.map { ($0.serialNumber, $0.serialLocation) }
        return (definitions, parsed)
    }

    /// The phases of a plan, each timed (`BuildTimings`): scan, classify, evaluate and sign (one pipeline, whose
    /// consumer signs, collects or only validates), check. A plan that fails has staged, but not committed.
    mutating func makePlan(
        timings: BuildTimings = BuildTimings(isEnabled: false),
        progress: @escaping @Sendable (BuildProgress) -> Void
    ) throws -> BuildPlan {
        let paths = try timings.phase("scan") { () throws(BuildFailure) in try scan() }
        progress(.planning(files: paths.count))
        let work = timings.phase("classify") { classify(paths) }
        let parts = PartTimes(isEnabled: timings.isEnabled)
        let results = evaluateAndConsume(work, parts: parts, progress: progress)
        timings.mark("evaluate and sign", parts: parts.parts)
        return try timings.phase("check") { try check(work, results) }
    }

    /// Scan: the content files, in order.
    private mutating func scan() throws(BuildFailure) -> [String] {
        do { listedFiles = try Self.contentFiles(in: settings.contentDirectory, jobs: settings.jobs) } catch {
            throw BuildFailure(diagnostics: error.diagnostics)
        }
        return listedFiles
    }

    /// The files to parse, cut into units of work, with their bytes until a unit takes them.
    private struct Work: Sendable {
        var files: [ParseFile]
        var sources: ResultSlots<[UInt8]>
        var units: [ParseUnit]
    }

    /// Classify: read and hash every file, except those whose stamp says they are as the last build hashed them;
    /// find the files (and entries of lists) whose passes all keep their fingerprints, which are not parsed; cut
    /// the others into units of work.
    private mutating func classify(_ paths: [String]) -> Work {
        let reader = FileReader(
            state: state, evaluator: evaluator, boundary: settings.projectBoundary, now: settings.clock(),
            usesPreviousState: usesPreviousState)
        let read = ParallelLoop.map(paths, jobs: settings.jobs, workerState: { PassEvaluator.UnchangedCheckMemo() }) {
            path, memo in
            reader.read(path, memo: &memo)
        }
        // Whether each pass of an unchanged file (or entry) would come out the same (all of them at once, so that one
        // file of 100,000 passes is checked on every core too).
        let candidates = read.flatMap { file, allUnchanged in
            allUnchanged != nil
                ? [] : file.previous?.passes ?? file.reusedEntries.sorted { $0.key < $1.key }.map(\.value)
        }
        let (state, evaluator) = (self.state, self.evaluator)
        let unchanged = ParallelLoop.map(
            candidates, jobs: settings.jobs, workerState: { PassEvaluator.UnchangedCheckMemo() }
        ) {
            key, memo in state.passes[key].map { evaluator.isUnchanged($0, memo: &memo) } ?? false
        }
        return prepare(sortOut(read, unchanged: unchanged))
    }

    /// Classify's reading of one content file, on any worker.
    private struct FileReader: Sendable {
        let state: BuildState
        let evaluator: PassEvaluator
        let boundary: ProjectBoundary
        /// The clock's reading the stamps are compared with (`FileStamp.isSettled`).
        let now: Int64
        let usesPreviousState: Bool

        /// Files whose stamp is as the last build's, with at most this many passes, are checked for changes as they are read.
        static let checkedWhenRead = 64

        /// Reads and hashes one content file, or finds it unchanged by its stamp (and, for a few passes, whether all of them are).
        func read(_ path: String, memo: inout PassEvaluator.UnchangedCheckMemo) -> (file: ReadFile, allUnchanged: Bool?)
        {
            guard !ProjectBoundary.hasUnsafeName(path) else {
                var file = ReadFile(path: path)
                file.refusal = .unsafeName
                return (file, nil)
            }
            let stamp = FileStamp(path: path).flatMap { $0.isSettled(now: now) ? $0 : nil }
            let known = usesPreviousState ? state.contentFiles.index(forKey: path) : nil
            let previous = known.map { state.contentFiles.values[$0] }
            // The state's string for the path: looked up again later, it is found without comparing its bytes.
            var file = ReadFile(path: known.map { state.contentFiles.keys[$0] } ?? path)
            if let stamp, let previous, let kept = previous.stamp, stamp.isSpelled(as: kept) {
                // Its hash is the previous one: set below, if the file is parsed after all.
                file.previous = previous
                file.stamp = kept  // one string for both
                guard previous.passes.count <= Self.checkedWhenRead else { return (file, nil) }
                return (
                    file,
                    previous.passes.allSatisfy { key in
                        state.passes[key].map { evaluator.isUnchanged($0, memo: &memo) } ?? false
                    }
                )
            }
            file.stamp = stamp?.description
            let bytes: [UInt8]
            switch boundary.readListedFile(path) {
            case .success(let read): bytes = read
            case .failure(let refusal):
                file.refusal = refusal
                return (file, nil)
            }
            file.bytes = bytes
            file.hash = sha256Hex(bytes)
            if let previous {
                if previous.packedHash == PackedDigest(file.hash) {
                    file.previous = previous
                } else if let signature = previous.entries {
                    BuildPlanner.matchEntries(of: &file, bytes: bytes, previous: previous, signature: signature)
                }
            }
            return (file, nil)
        }
    }

    /// Sorts the read files out: unreadable ones are reported, unchanged ones reused, the others (with the
    /// entries of a list that did not change set aside) are to parse.
    private mutating func sortOut(_ read: [(file: ReadFile, allUnchanged: Bool?)], unchanged: [Bool]) -> [ReadFile] {
        var parse: [ReadFile] = []
        var candidate = 0
        for (readFile, allUnchanged) in read {
            var file = readFile
            if let refusal = file.refusal {
                collector.add(Self.unreadable(file.path, refusal, boundary: settings.projectBoundary))
                continue
            }
            if let previous = file.previous {
                var isUnchanged = allUnchanged
                if isUnchanged == nil {
                    isUnchanged = !unchanged[candidate..<candidate + previous.passes.count].contains(false)
                    candidate += previous.passes.count
                }
                if isUnchanged!, reuse(previous, file: file.path) {
                    plan.reusedFiles.append((file.path, file.stamp))
                    continue
                }
                if file.hash.isEmpty { file.hash = previous.hash }
            } else if !file.reusedEntries.isEmpty {
                let count = file.reusedEntries.count
                let whole = reuseEntries(of: &file, verdicts: unchanged[candidate..<candidate + count])
                candidate += count
                if whole { continue }
            }
            file.previous = nil
            parse.append(file)
        }
        return parse
    }

    /// Keeps the entries of a changed list whose passes keep their fingerprints; true when that is every entry
    /// (the file is then not parsed at all).
    private mutating func reuseEntries(of file: inout ReadFile, verdicts: ArraySlice<Bool>) -> Bool {
        guard let list = file.list else { return false }
        let indices = file.reusedEntries.keys.sorted()
        for (index, verdict) in zip(indices, verdicts) where !verdict { file.reusedEntries[index] = nil }
        if file.reusedEntries.values.contains(where: { defined.index(forKey: $0) != nil }) { file.reusedEntries = [:] }
        for key in file.reusedEntries.values {
            defined[key] = SourceLocation(file: file.path)
            definedBefore += 1  // a reused entry's pass is one of the previous state's
            plan.unchanged.append(key)
        }
        guard file.reusedEntries.count == list.entries.count else { return false }
        let keys = list.entries.indices.map { file.reusedEntries[$0]! }
        plan.contentFiles[file.path] = .init(hash: file.hash, passes: keys, stamp: file.stamp, entries: list.signature)
        return true
    }

    /// Each file is parsed by the worker that evaluates its passes, and a large list of passes in runs of
    /// `runLength` entries or fewer (`runs(of:jobs:)`), so that only the definitions being evaluated are in memory
    /// (100,000 parsed entries are a few hundred MB) and a large list is parsed on every core.
    private func prepare(_ parse: consuming [ReadFile]) -> Work {
        let (jobs, boundary, keepsEntries) = (settings.jobs, settings.projectBoundary, usesPreviousState)
        var prepared = ParallelLoop.map(parse, jobs: jobs) { file in
            Self.prepare(file, keepsEntries: keepsEntries, boundary: boundary, jobs: jobs)
        }
        // The bytes are taken from here by the unit that parses them, and let go of.
        let sources = ResultSlots<[UInt8]>(values: prepared.map { $0.bytes ?? [] })
        for index in prepared.indices { prepared[index].bytes = nil }
        let units = prepared.indices.flatMap { index in
            prepared[index].runs.map { $0.map { ParseUnit(file: index, run: $0) } } ?? [
                ParseUnit(file: index, run: nil)
            ]
        }
        return Work(files: prepared, sources: sources, units: units)
    }

    /// Evaluate and sign: one pipeline on every core. Each worker parses a unit, evaluates its definitions one
    /// by one and hands each sound item to its consumer's worker at once (the build's signs and stages it), so
    /// that a parsed definition lives only until its item is consumed.
    private func evaluateAndConsume(
        _ work: Work, parts: PartTimes,
        progress: @escaping @Sendable (BuildProgress) -> Void
    ) -> ResultSlots<ParsedUnit> {
        let results = ResultSlots<ParsedUnit>(count: work.units.count)
        let (state, evaluator, consumer) = (self.state, self.evaluator, self.consumer)
        let reporter = ProgressThrottle(total: work.files.reduce(0) { $0 + $1.expectedPasses }, report: progress)
        let failed = Atomic<Bool>(false)
        ParallelLoop.run(count: work.units.count, jobs: settings.jobs) { worker, next in
            var itemWorker = consumer.worker(worker)
            let workerStart = parts.isEnabled ? BuildTimings.threadCPU() : 0
            var consuming = 0.0
            while let index = next() {
                let unit = work.units[index]
                var (definitions, parsed) = Self.parse(unit, of: work.files[unit.file], sources: work.sources)
                if parsed.problems.contains(where: \.isError) { failed.store(true, ordering: .relaxed) }
                parsed.evaluations.reserveCapacity(definitions.count)
                // Each definition is let go of once evaluated.
                definitions.reverse()
                while let definition = definitions.popLast() {
                    var evaluation = evaluator.evaluate(definition)
                    if evaluation.diagnostics.contains(where: \.isError) { failed.store(true, ordering: .relaxed) }
                    if let job = evaluation.job, !failed.load(ordering: .relaxed) {
                        // A changed token is refused later, with the passes in order; consume nothing more then.
                        if let old = state.passes[job.record.key]?.tokenHash, let new = job.record.tokenHash, old != new
                        {
                            failed.store(true, ordering: .relaxed)
                        } else {
                            let before = parts.isEnabled ? BuildTimings.threadCPU() : 0
                            if itemWorker.consume(&evaluation) { reporter.step() }
                            if parts.isEnabled { consuming += BuildTimings.threadCPU() - before }
                        }
                    }
                    if case .success? = evaluation.signed { parsed.signedCount += 1 }
                    parsed.evaluations.append(PlannedPass(evaluation))
                }
                results[index] = parsed
            }
            if parts.isEnabled {
                parts.add("parse and evaluate", BuildTimings.threadCPU() - workerStart - consuming)
                parts.add(consumer.partName, consuming)
            }
        }
        reporter.finish()
        return results
    }

    /// Check: the checks that span items, in content order (duplicate identifiers, one kind per type identifier,
    /// token and serial changes), the content files' records and the removed items.
    private mutating func check(_ work: Work, _ results: ResultSlots<ParsedUnit>) throws -> BuildPlan {
        let evaluatedAgain = collectProblems(work, results)
        collector.add(evaluator.templates.diagnostics)
        // Signed passes wait for the commit: no room to spare.
        plan.signed.reserveCapacity((0..<work.units.count).reduce(0) { $0 + results[$1]!.signedCount })
        var packagingFailure: (any Error)?
        var firstUnit = 0
        for (fileIndex, file) in work.files.enumerated() {
            let fileUnits = (firstUnit..<firstUnit + (file.runs?.count ?? 1)).map { results.take($0)! }
            firstUnit += fileUnits.count
            let evaluations = evaluatedAgain[fileIndex] ?? fileUnits.flatMap(\.evaluations)
            let keys = accept(evaluations, of: file, packagingFailure: &packagingFailure)
            if file.layout == nil, evaluations.count == 1, let only = fileUnits.lazy.compactMap(\.firstSerial).first {
                checkSerialChange(file: file.path, keys: keys, serial: only)
            }
            if let bundle = fileUnits.first?.bundle { plan.bundles[file.path] = bundle }
            // Entry hashes are kept only when each entry gave one pass, in order.
            let entries = file.entries.flatMap { PassListEntries.hashes(in: $0).count == keys.count + 1 ? $0 : nil }
            plan.contentFiles[file.path] = BuildState.ContentFileRecord(
                hash: file.hash, passes: keys, stamp: file.stamp, entries: entries)
        }
        // Looking up every previous key (100,000 of them, one at a time) only when some were not defined again.
        if definedBefore < state.passes.count {
            for (key, record) in state.passes where defined[key] == nil {
                plan.removed.append(record)
            }
        }
        plan.removed.sort { $0.key < $1.key }
        if collector.hasErrors { throw BuildFailure(diagnostics: collector.report) }
        if let packagingFailure { throw packagingFailure }
        plan.warnings = collector.report
        return plan
    }

    /// Problems of a file parsed in runs are those of the whole file, as one parse of it finds them
    /// (a problem before `passes:` would be found in every run); such a file's passes are evaluated
    /// again from the whole file when its runs did not give the same definitions (a syntax error).
    private mutating func collectProblems(_ work: Work, _ results: ResultSlots<ParsedUnit>) -> [Int: [PlannedPass]] {
        var firstUnit = 0
        var evaluatedAgain: [Int: [PlannedPass]] = [:]
        for (index, file) in work.files.enumerated() {
            let count = file.runs?.count ?? 1
            let problems = (firstUnit..<firstUnit + count).flatMap { results[$0]!.problems }
            if count > 1, !problems.isEmpty, let bytes = work.sources[index] {
                let whole = ContentLoader.definitions(in: file.path, bytes: bytes)
                collector.add(whole.problems)
                if whole.definitions.count
                    != (firstUnit..<firstUnit + count).reduce(0, { $0 + results[$1]!.evaluations.count })
                {
                    evaluatedAgain[index] = whole.definitions.map { PlannedPass(evaluator.evaluate($0)) }
                }
            } else {
                collector.add(problems)
            }
            firstUnit += count
        }
        return evaluatedAgain
    }

    /// Accepts a file's evaluations in order; returns the keys of its passes, the reused entries' in their places.
    private mutating func accept(_ evaluations: [PlannedPass], of file: ParseFile, packagingFailure: inout (any Error)?)
        -> [String]
    {
        var keys: [String] = []
        // Reused entries in their places, when the parsed ones are as many as the entries left to parse.
        var layout = file.layout.map { $0[...] } ?? []
        if layout.filter({ $0 == nil }).count != evaluations.count { layout = [] }
        func takeReused() {
            while let first = layout.first, let key = first {
                keys.append(key)
                layout.removeFirst()
            }
        }
        for evaluation in evaluations {
            takeReused()
            if !layout.isEmpty { layout.removeFirst() }
            guard let key = accept(evaluation) else { continue }
            keys.append(key)
            switch evaluation.outcome {
            case .signed(.success(let pass))?: plan.signed.append(pass)
            case .signed(.failure(let error))?: packagingFailure = packagingFailure ?? error
            case .job?, nil: break
            }
        }
        takeReused()
        return keys
    }

    // MARK: - Files

    static func isYAML(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".yml") || lowered.hasSuffix(".yaml")
    }

    /// For a changed YAML file with `passes:` whose header is as before: which
    /// of its entries are byte for byte those of the last build, with their keys.
    private static func matchEntries(
        of file: inout ReadFile, bytes: [UInt8], previous: BuildState.ContentFileRecord, signature: String
    ) {
        let old = PassListEntries.hashes(in: signature)
        guard isYAML(file.path), old.count == previous.passes.count + 1, let list = PassListEntries(bytes),
            list.headerHash == old[0]
        else { return }
        file.list = list
        var used = Set<String>()
        used.reserveCapacity(previous.passes.count)
        file.reusedEntries.reserveCapacity(previous.passes.count)
        // Most entries are where they were; the others are looked up by hash. An entry copied
        // twice defines its serial twice: such copies are parsed, and reported.
        var moved: [(index: Int, hash: Substring)] = []
        for (index, hash) in list.entryHashes.enumerated() {
            if index + 1 < old.count, old[index + 1] == hash, used.insert(previous.passes[index]).inserted {
                file.reusedEntries[index] = previous.passes[index]
            } else {
                moved.append((index, hash))
            }
        }
        guard !moved.isEmpty else { return }
        // The last old entry of each hash. A few moved entries (one edited, say) are looked for
        // among the old ones directly: hashing 100,000 of them into a dictionary takes longer.
        var keyByHash: [Substring: String] = [:]
        if moved.count <= 8 {
            for (hash, key) in zip(old.dropFirst(), previous.passes) where moved.contains(where: { $0.hash == hash }) {
                keyByHash[hash] = key
            }
        } else {
            keyByHash.reserveCapacity(previous.passes.count)
            for (hash, key) in zip(old.dropFirst(), previous.passes) { keyByHash[hash] = key }
        }
        for (index, hash) in moved {
            if let key = keyByHash[hash], used.insert(key).inserted { file.reusedEntries[index] = key }
        }
    }

    /// The content files under `directory`, sorted: what `ContentLoader.contentFiles`
    /// lists (the same rule: `.yml`, `.yaml` and `.json` files, names starting
    /// with a dot skipped), read with one getdents per folder instead of a stat per name.
    ///
    /// Each folder's names are sorted on their own, a folder's as if followed by "/" (as the paths
    /// of its files are), and walked depth first: the paths come out in order without sorting
    /// 100,000 whole paths. The order is checked, and the paths sorted whole when it is not the
    /// same (String order compares normalized text, which need not follow each part's order).
    static func contentFiles(in directory: String, jobs: Int = 1) throws(ContentErrors) -> [String] {
        guard let entries = AtomicFileSystem.directoryEntries(directory) else {
            return try ContentLoader(directory: directory).contentFiles()
        }
        var files: [String] = []
        // The top folder's prefix is spelled as NSString joins it.
        let top = String((directory as NSString).appendingPathComponent("x").dropLast())
        var pending: [(path: String, isDirectory: Bool)] = []
        func push(_ entries: [(name: String, isDirectory: Bool)], prefix: String) {
            let children = entries.filter {
                !$0.name.hasPrefix(".") && ($0.isDirectory || ContentLoader.isContentFileName($0.name))
            }
            .map { (order: $0.isDirectory ? $0.name + "/" : $0.name, entry: $0) }
            .sorted { $0.order < $1.order }
            for child in children.reversed() { pending.append((prefix + child.entry.name, child.entry.isDirectory)) }
        }
        push(entries, prefix: top)
        while let next = pending.popLast() {
            guard next.isDirectory else {
                files.append(next.path)
                continue
            }
            if let inner = AtomicFileSystem.directoryEntries(next.path) { push(inner, prefix: next.path + "/") }
        }
        for index in files.indices.dropFirst() where !(files[index - 1] < files[index]) {
            return sorted(files, jobs: jobs)
        }
        return files
    }

    /// `paths.sorted()`, in parts sorted on `jobs` threads and then merged: 100,000 paths take a tenth of a second on one.
    static func sorted(_ paths: [String], jobs: Int) -> [String] {
        let parts = min(jobs, 4, paths.count / 4096)
        guard parts > 1 else { return paths.sorted() }
        let size = (paths.count + parts - 1) / parts
        var sortedParts = ParallelLoop.map(Array(0..<parts), jobs: parts) { part in
            paths[part * size..<min(paths.count, (part + 1) * size)].sorted()
        }
        while sortedParts.count > 1 {
            let (first, second) = (sortedParts.removeLast(), sortedParts.removeLast())
            var merged: [String] = []
            merged.reserveCapacity(first.count + second.count)
            var (i, j) = (0, 0)
            while i < first.count, j < second.count {
                if second[j] < first[i] {
                    merged.append(second[j])
                    j += 1
                } else {
                    merged.append(first[i])
                    i += 1
                }
            }
            merged += first[i...]
            merged += second[j...]
            sortedParts.append(merged)
        }
        return sortedParts[0]
    }

    /// An unchanged file whose passes all keep their fingerprint (checked
    /// before) is not parsed at all, unless an earlier file defined one of them.
    /// (Each of its passes is in `state.passes`: a pass that is not was not found unchanged.)
    private mutating func reuse(_ previous: BuildState.ContentFileRecord, file: String) -> Bool {
        for key in previous.passes {
            guard defined.index(forKey: key) == nil else { return false }
        }
        // Most builds define every pass of the last one again, nearly all of them here.
        if defined.isEmpty { defined.reserveCapacity(state.passes.count) }
        let location = SourceLocation(file: file)
        for key in previous.passes {
            defined[key] = location
            definedBefore += 1
            plan.unchanged.append(key)
        }
        return true
    }

    /// A one-pass file whose serial changed is a new pass pretending to be the
    /// old one; Apple forbids changing a serial, so say what to do instead.
    private mutating func checkSerialChange(
        file: String, keys: [String], serial: (number: String, location: SourceLocation)
    ) {
        guard let previous = state.contentFiles[file], previous.passes.count == 1, keys.count == 1,
            let oldKey = previous.passes.first, oldKey != keys[0], let old = state.passes[oldKey],
            defined[oldKey] == nil, keys[0].hasPrefix(old.typeIdentifier + "/")
        else { return }
        collector.add(
            .error(
                at: serial.location, keyPath: ["serialNumber"], rule: "content.serial-changed",
                "serialNumber changed from \(old.identifier) to \(serial.number). Wallet identifies a pass by its serial, so a device holding \(old.identifier) would never get this change. To retire \(old.identifier) and issue a new pass, delete this file and add the new pass in a new file; to keep updating the existing pass, put back serialNumber: \(old.identifier)"
            ))
    }

    // MARK: - Passes

    /// The checks that span passes; returns the pass's key when it is sound.
    private mutating func accept(_ evaluation: PlannedPass) -> String? {
        collector.add(evaluation.diagnostics)
        guard let key = evaluation.key else { return nil }
        if let first = defined[key] {
            collector.add(
                .error(
                    at: evaluation.serialLocation, keyPath: ["serialNumber"], rule: "content.duplicate-serial",
                    "serialNumber \(ItemKey.split(key)?.identifier ?? "") is already used by another pass of \(ItemKey.split(key)?.typeIdentifier ?? ""); serials must be unique per passTypeIdentifier",
                    notes: [(first, "first defined here")]))
            return nil
        }
        defined[key] = evaluation.serialLocation
        let type = ItemKey.split(key)?.typeIdentifier ?? key[...]
        if let first = kindsByType[type] {
            guard first.kind == evaluation.kind else {
                collector.add(
                    .error(
                        at: evaluation.serialLocation, rule: "content.type-kind",
                        "\(type) is used as a \(first.kind.noun) type identifier and as a\(evaluation.kind == .order ? "n" : "") \(evaluation.kind.noun) type identifier; passes and orders share by-token/ and the device indices, so each needs its own (Apple issues Pass Type IDs and Order Type IDs separately)",
                        notes: [(first.location, "first used for a \(first.kind.noun) here")]))
                return nil
            }
        } else {
            kindsByType[type] = (evaluation.kind, evaluation.serialLocation)
        }
        if evaluation.isUnchanged || state.passes.index(forKey: key) != nil { definedBefore += 1 }
        if let previous = state.passes[key], let old = previous.tokenHash, let new = evaluation.tokenHash, old != new {
            collector.add(
                .error(
                    at: evaluation.tokenLocation, keyPath: ["authenticationToken"], rule: "pass.token-changed",
                    "the authenticationToken of pass \(key) would change. Apple forbids changing the token of an existing pass: devices keep the old one and their updates would fail. Restore the previous PASSFORGE_TOKEN_SECRET (or authenticationToken); to really replace the pass, issue it under a new serial"
                ))
            return nil
        }
        if var unsigned = evaluation.unsigned {
            unsigned.warnings = evaluation.diagnostics.filter { !$0.isError }
            plan.unsigned.append(unsigned)
        }
        if evaluation.isUnchanged {
            plan.unchanged.append(key)
        } else if case .job(let job)? = evaluation.outcome {
            plan.jobs.append(job)
        }
        return key
    }
}

func iso8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: date)
}

extension BuildPlanner {
    /// Why a content file was not read, for the person who can fix it.
    static func unreadable(_ path: String, _ refusal: ProjectBoundary.Refusal, boundary: ProjectBoundary)
        -> ContentDiagnostic
    {
        switch refusal {
        case .outside: return boundary.outsideContentFile(path)
        case .unsafeName:
            return .error(
                at: SourceLocation(file: ProjectBoundary.shownName(path)), rule: "content.file-name",
                "the name of this content file holds a control or bidirectional character (shown as ?), which would start lines of its own in build output, logs and pull-request comments; rename the file"
            )
        case .unreadable:
            return .error(
                at: SourceLocation(file: path), rule: "content.unreadable",
                "cannot read this file; check its permissions")
        }
    }
}

extension ProjectBoundary {
    /// The bytes of a content file found by walking the content folder (so no folder on its way is a
    /// link: the walk does not follow them). A plain file is read at once, without resolving its path;
    /// a link only when it leads inside, as ``read(_:)`` does. One lstat more per file.
    func readListedFile(_ path: String) -> Result<[UInt8], Refusal> {
        guard !Self.hasUnsafeName(path) else { return .failure(.unsafeName) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return .failure(.unreadable) }
        guard (info.st_mode & S_IFMT) == S_IFLNK else {
            return AtomicFileSystem.readFile(path).map { .success($0) } ?? .failure(.unreadable)
        }
        return read(path)
    }
}
