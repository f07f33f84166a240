import AtomicFiles
import Foundation
import PassContent
import PassModel
import PassPackage
import Synchronization

/// A pass that has to be (re)packaged and signed.
struct PackagingJob: Sendable {
    var record: BuildState.PassRecord
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
    /// Passes whose inputs did not change: their records carry over as they are.
    var unchanged: [BuildState.PassRecord] = []
    var removed: [BuildState.PassRecord] = []
    var contentFiles: [String: BuildState.ContentFileRecord] = [:]
    var warnings: [ContentDiagnostic] = []
    /// Content file → the `.pkpasses` bundle it declares, for the files parsed in this build (see `PassBundles`).
    var bundles: [String: BundleDeclaration] = [:]
}

/// Collects diagnostics; the same problem found in many passes (a template
/// image that is too large, say) is reported once, with a count.
struct DiagnosticCollector {
    private(set) var diagnostics: [ContentDiagnostic] = []
    private var seen: [String: Int] = [:]
    private var repeats: [Int] = []

    mutating func add(_ diagnostic: ContentDiagnostic) {
        let key = "\(diagnostic.location)|\(diagnostic.keyPath?.description ?? "")|\(diagnostic.rule)|\(diagnostic.message)"
        if let index = seen[key] {
            repeats[index] += 1
            return
        }
        seen[key] = diagnostics.count
        diagnostics.append(diagnostic)
        repeats.append(1)
    }

    mutating func add(_ diagnostics: [ContentDiagnostic]) { diagnostics.forEach { add($0) } }

    var hasErrors: Bool { diagnostics.contains(where: \.isError) }

    /// Diagnostics sorted by file and line, repeated ones with "(in N passes)".
    var report: [ContentDiagnostic] {
        zip(diagnostics, repeats).map { diagnostic, count in
            var diagnostic = diagnostic
            if count > 1 { diagnostic.message += " (in \(count) passes)" }
            return diagnostic
        }.sorted { ($0.location.file, $0.location.line, $0.location.column) < ($1.location.file, $1.location.line, $1.location.column) }
    }
}

/// Decides, for every pass, whether it is unchanged, new, changed or gone,
/// and validates everything it renders. Reports every problem at once.
///
/// Phases, each on every core but the last: read and hash every content
/// file; check that the passes of unchanged files keep their fingerprints
/// (such a file is not even parsed); parse the other files; render and
/// validate their definitions — and, given a packager, sign and stage each
/// new or changed pass at once, so that rendering, signing and writing form
/// one pipeline. Last, in content order, the checks that span passes
/// (duplicate serials, token and serial changes). A pass staged by a build
/// that then fails is never committed.
struct BuildPlanner {
    let settings: BuildSettings
    let state: BuildState
    let evaluator: PassEvaluator
    /// Validate only: parse every file, sign nothing.
    let validateOnly: Bool
    /// Signs and stages passes as they are planned; nil to plan only.
    let packager: ParallelPackager?

    private var collector = DiagnosticCollector()
    private var plan = BuildPlan()
    /// key → where it is defined, for duplicate serials.
    private var defined: [String: SourceLocation] = [:]

    init(settings: BuildSettings, state: BuildState, secret: TokenSecret, identities: SigningIdentities, validateOnly: Bool,
         packager: ParallelPackager? = nil) {
        self.settings = settings
        self.state = state
        self.validateOnly = validateOnly
        self.packager = validateOnly ? nil : packager
        self.evaluator = PassEvaluator(settings: settings, state: state, secret: secret, identities: identities,
                                       templates: TemplateCache(loader: TemplateLoader(directory: settings.templatesDirectory)),
                                       validateOnly: validateOnly)
    }

    /// A content file as read: its hash, and its bytes while they may still need parsing.
    private struct ReadFile: Sendable {
        var path: String
        var bytes: [UInt8]?
        var hash = ""
        /// The previous record of the file, when its bytes are the same.
        var previous: BuildState.ContentFileRecord?
    }

    /// A content file that has to be parsed, with what it defines.
    private struct ParsedFile: Sendable {
        var path: String
        var hash: String
        var definitions: [PassDefinition] = []
        var problems: [ContentDiagnostic] = []
    }

    mutating func makePlan(progress: @escaping @Sendable (BuildProgress) -> Void) throws -> BuildPlan {
        let paths: [String]
        do { paths = try ContentLoader(directory: settings.contentDirectory).contentFiles() } catch {
            throw BuildFailure(diagnostics: error.diagnostics)
        }
        progress(.planning(files: paths.count))
        let jobs = settings.jobs
        let (state, validateOnly, evaluator) = (self.state, self.validateOnly, self.evaluator)

        // Read and hash every file.
        let read = ParallelLoop.map(paths, jobs: jobs) { path in
            var file = ReadFile(path: path, bytes: AtomicFileSystem.readFile(path))
            guard let bytes = file.bytes else { return file }
            file.hash = sha256Hex(bytes)
            if !validateOnly, let previous = state.contentFiles[path], previous.hash == file.hash { file.previous = previous }
            return file
        }
        // Whether each pass of an unchanged file would come out the same (all of them at once, so that one
        // file of 100,000 passes is checked on every core too).
        let candidates = read.flatMap { file in (file.previous?.passes ?? []).map { (file.path, $0) } }
        let unchanged = ParallelLoop.map(candidates, jobs: jobs) { _, key in
            state.passes[key].map { evaluator.isUnchanged($0) } ?? false
        }
        var parse: [ReadFile] = []
        var candidate = 0
        for var file in read {
            guard file.bytes != nil else {
                collector.add(.error(at: SourceLocation(file: file.path), rule: "content.unreadable", "cannot read this file; check its permissions"))
                continue
            }
            if let previous = file.previous {
                let verdicts = unchanged[candidate..<candidate + previous.passes.count]
                candidate += previous.passes.count
                if !verdicts.contains(false), reuse(previous, file: file.path) {
                    plan.contentFiles[file.path] = previous
                    continue
                }
            }
            file.previous = nil
            parse.append(file)
        }
        let parsed = ParallelLoop.map(parse, jobs: jobs) { file in
            let (definitions, problems) = ContentLoader.definitions(in: file.path, bytes: file.bytes!)
            return ParsedFile(path: file.path, hash: file.hash, definitions: definitions, problems: problems)
        }
        for file in parsed { collector.add(file.problems) }

        // Render and validate on every core; each evaluation is independent. Passes that changed are signed
        // and staged by the same worker right away, until a problem shows the build will fail.
        let definitions = parsed.flatMap(\.definitions)
        let evaluations = ResultSlots<PassEvaluator.Evaluation>(count: definitions.count)
        let packager = self.packager
        let reporter = ProgressThrottle(total: definitions.count, report: progress)
        let failed = Atomic<Bool>(false)
        ParallelLoop.run(count: definitions.count, jobs: jobs) { worker, next in
            var stager = packager?.worker(worker)
            while let index = next() {
                var evaluation = evaluator.evaluate(definitions[index])
                if evaluation.diagnostics.contains(where: \.isError) { failed.store(true, ordering: .relaxed) }
                if let job = evaluation.job, stager != nil, !failed.load(ordering: .relaxed) {
                    // A changed token is refused later, with the passes in order; sign nothing more then.
                    if let old = state.passes[job.record.key]?.tokenHash, let new = job.record.tokenHash, old != new {
                        failed.store(true, ordering: .relaxed)
                    } else {
                        evaluation.signed = Result { try stager!.package(job, name: index) }
                        evaluation.job = nil
                        reporter.step()
                    }
                }
                evaluations[index] = evaluation
            }
        }
        reporter.finish()
        collector.add(evaluator.templates.diagnostics)
        var index = 0
        var packagingFailure: (any Error)?
        for file in parsed {
            var keys: [String] = []
            for _ in file.definitions {
                let evaluation = evaluations.take(index)!
                index += 1
                guard let key = accept(evaluation) else { continue }
                keys.append(key)
                switch evaluation.signed {
                case .success(let pass)?: plan.signed.append(pass)
                case .failure(let error)?: packagingFailure = packagingFailure ?? error
                case nil: break
                }
            }
            checkSerialChange(file: file.path, keys: keys, definitions: file.definitions)
            if let bundle = file.definitions.first?.bundle { plan.bundles[file.path] = bundle }
            plan.contentFiles[file.path] = BuildState.ContentFileRecord(hash: file.hash, passes: keys)
        }
        for (key, record) in state.passes where defined[key] == nil {
            plan.removed.append(record)
        }
        plan.removed.sort { $0.key < $1.key }
        if collector.hasErrors { throw BuildFailure(diagnostics: collector.report) }
        if let packagingFailure { throw packagingFailure }
        plan.warnings = collector.report
        return plan
    }

    // MARK: - Files

    /// An unchanged file whose passes all keep their fingerprint (checked
    /// before) is not parsed at all, unless an earlier file defined one of them.
    private mutating func reuse(_ previous: BuildState.ContentFileRecord, file: String) -> Bool {
        var records: [BuildState.PassRecord] = []
        for key in previous.passes {
            guard let record = state.passes[key], defined[key] == nil else { return false }
            records.append(record)
        }
        for record in records {
            defined[record.key] = SourceLocation(file: file)
            plan.unchanged.append(record)
        }
        return true
    }

    /// A one-pass file whose serial changed is a new pass pretending to be the
    /// old one; Apple forbids changing a serial, so say what to do instead.
    private mutating func checkSerialChange(file: String, keys: [String], definitions: [PassDefinition]) {
        guard let previous = state.contentFiles[file], previous.passes.count == 1, keys.count == 1, definitions.count == 1,
              let oldKey = previous.passes.first, oldKey != keys[0], let old = state.passes[oldKey],
              defined[oldKey] == nil, keys[0].hasPrefix(old.passTypeIdentifier + "/")
        else { return }
        collector.add(.error(
            at: definitions[0].serialLocation, keyPath: ["serialNumber"], rule: "content.serial-changed",
            "serialNumber changed from \(old.serialNumber) to \(definitions[0].serialNumber). Wallet identifies a pass by its serial, so a device holding \(old.serialNumber) would never get this change. To retire \(old.serialNumber) and issue a new pass, delete this file and add the new pass in a new file; to keep updating the existing pass, put back serialNumber: \(old.serialNumber)"))
    }

    // MARK: - Passes

    /// The checks that span passes; returns the pass's key when it is sound.
    private mutating func accept(_ evaluation: PassEvaluator.Evaluation) -> String? {
        collector.add(evaluation.diagnostics)
        guard let key = evaluation.key else { return nil }
        if let first = defined[key] {
            collector.add(.error(at: evaluation.serialLocation, keyPath: ["serialNumber"], rule: "content.duplicate-serial",
                                 "serialNumber \(key.split(separator: "/").last ?? "") is already used by another pass of \(key.split(separator: "/").first ?? ""); serials must be unique per passTypeIdentifier",
                                 notes: [(first, "first defined here")]))
            return nil
        }
        defined[key] = evaluation.serialLocation
        if let previous = state.passes[key], let old = previous.tokenHash, let new = evaluation.tokenHash, old != new {
            collector.add(.error(
                at: evaluation.tokenLocation, keyPath: ["authenticationToken"], rule: "pass.token-changed",
                "the authenticationToken of pass \(key) would change. Apple forbids changing the token of an existing pass: devices keep the old one and their updates would fail. Restore the previous PASSFORGE_TOKEN_SECRET (or authenticationToken); to really replace the pass, issue it under a new serial"))
            return nil
        }
        if let unchanged = evaluation.unchanged {
            plan.unchanged.append(unchanged)
        } else if let job = evaluation.job {
            plan.jobs.append(job)
        }
        return key
    }
}

func iso8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: date)
}
