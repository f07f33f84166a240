import AtomicFiles
import Dispatch
import Foundation
import PassContent
import PassModel
import PassPackage

/// A pass that has to be (re)packaged and signed.
struct PackagingJob: Sendable {
    var record: BuildState.PassRecord
    /// The files of the package, pass.json included.
    var files: [String: [UInt8]]
    var identity: SigningIdentities.Resolved
}

/// What a build will do, decided before anything is signed or written.
struct BuildPlan: Sendable {
    var jobs: [PackagingJob] = []
    /// Passes whose inputs did not change: their records carry over as they are.
    var unchanged: [BuildState.PassRecord] = []
    var removed: [BuildState.PassRecord] = []
    var contentFiles: [String: BuildState.ContentFileRecord] = [:]
    var warnings: [ContentDiagnostic] = []
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
/// Three phases: read and hash every content file (an unchanged file whose
/// passes keep their fingerprints is not even parsed); render and validate
/// the definitions of the other files on every core; then, in content
/// order, the checks that span passes (duplicate serials, token and serial
/// changes).
struct BuildPlanner {
    let settings: BuildSettings
    let state: BuildState
    let evaluator: PassEvaluator
    /// Validate only: parse every file, sign nothing.
    let validateOnly: Bool

    private var collector = DiagnosticCollector()
    private var plan = BuildPlan()
    /// key → where it is defined, for duplicate serials.
    private var defined: [String: SourceLocation] = [:]

    init(settings: BuildSettings, state: BuildState, secret: TokenSecret, identities: SigningIdentities, validateOnly: Bool) {
        self.settings = settings
        self.state = state
        self.validateOnly = validateOnly
        self.evaluator = PassEvaluator(settings: settings, state: state, secret: secret, identities: identities,
                                       templates: TemplateCache(loader: TemplateLoader(directory: settings.templatesDirectory)),
                                       validateOnly: validateOnly)
    }

    /// A content file that has to be parsed, with what it defines.
    private struct ParsedFile {
        var path: String
        var hash: String
        var definitions: [PassDefinition]
    }

    mutating func makePlan(progress: (BuildProgress) -> Void) throws(BuildFailure) -> BuildPlan {
        let files: [String]
        do { files = try ContentLoader(directory: settings.contentDirectory).contentFiles() } catch {
            throw BuildFailure(diagnostics: error.diagnostics)
        }
        progress(.planning(files: files.count))
        var parsed: [ParsedFile] = []
        for file in files {
            if let file = readFile(file) { parsed.append(file) }
        }
        // Render and validate on every core; each evaluation is independent.
        let definitions = parsed.flatMap { file in file.definitions.map { (file.path, $0) } }
        let evaluations = ResultSlots<PassEvaluator.Evaluation>(count: definitions.count)
        let evaluator = self.evaluator
        let next = Counter()
        DispatchQueue.concurrentPerform(iterations: min(settings.jobs, max(1, definitions.count))) { _ in
            while true {
                let index = next.increment() - 1
                guard index < definitions.count else { return }
                evaluations[index] = evaluator.evaluate(definitions[index].1)
            }
        }
        collector.add(evaluator.templates.diagnostics)
        var index = 0
        for file in parsed {
            var keys: [String] = []
            for _ in file.definitions {
                if let key = accept(evaluations[index]!) { keys.append(key) }
                index += 1
            }
            checkSerialChange(file: file.path, keys: keys, definitions: file.definitions)
            plan.contentFiles[file.path] = BuildState.ContentFileRecord(hash: file.hash, passes: keys)
        }
        for (key, record) in state.passes where defined[key] == nil {
            plan.removed.append(record)
        }
        plan.removed.sort { $0.key < $1.key }
        if collector.hasErrors { throw BuildFailure(diagnostics: collector.report) }
        plan.warnings = collector.report
        return plan
    }

    // MARK: - Files

    private mutating func readFile(_ file: String) -> ParsedFile? {
        guard let bytes = AtomicFileSystem.readFile(file) else {
            collector.add(.error(at: SourceLocation(file: file), rule: "content.unreadable", "cannot read this file; check its permissions"))
            return nil
        }
        let hash = sha256Hex(bytes)
        if !validateOnly, let previous = state.contentFiles[file], previous.hash == hash, reuse(previous, file: file) {
            plan.contentFiles[file] = previous
            return nil
        }
        let (definitions, problems) = ContentLoader.definitions(in: file, bytes: bytes)
        collector.add(problems)
        return ParsedFile(path: file, hash: hash, definitions: definitions)
    }

    /// An unchanged file whose passes all keep their fingerprint is not parsed at all.
    private mutating func reuse(_ previous: BuildState.ContentFileRecord, file: String) -> Bool {
        var records: [BuildState.PassRecord] = []
        for key in previous.passes {
            guard let record = state.passes[key], defined[key] == nil, evaluator.isUnchanged(record) else { return false }
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
