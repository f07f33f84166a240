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
struct BuildPlanner {
    /// Bumped when rendering changes, so every pass is rebuilt once.
    static let rendererVersion = "passforge-render-1"

    let settings: BuildSettings
    let state: BuildState
    let secret: TokenSecret
    let identities: SigningIdentities
    /// Validate only: parse every file, sign nothing.
    let validateOnly: Bool

    private var templates: [String: Result<(Template, String), ContentErrors>] = [:]
    private var collector = DiagnosticCollector()
    private var plan = BuildPlan()
    /// key → where it is defined, for duplicate serials.
    private var defined: [String: SourceLocation] = [:]
    private let validator = PassValidator()
    private let contextFingerprint: String

    init(settings: BuildSettings, state: BuildState, secret: TokenSecret, identities: SigningIdentities, validateOnly: Bool) {
        self.settings = settings
        self.state = state
        self.secret = secret
        self.identities = identities
        self.validateOnly = validateOnly
        var hasher = FingerprintHasher()
        hasher.add("renderer", Self.rendererVersion)
        hasher.add("config", settings.configuration.passDefaults.jsonValue.serialized())
        hasher.add("http", settings.allowsHTTPWebService ? "1" : "0")
        hasher.add("secret", secret.fingerprint)
        contextFingerprint = hasher.finalize()
    }

    mutating func makePlan(progress: (BuildProgress) -> Void) throws(BuildFailure) -> BuildPlan {
        let files: [String]
        do { files = try ContentLoader(directory: settings.contentDirectory).contentFiles() } catch {
            throw BuildFailure(diagnostics: error.diagnostics)
        }
        progress(.planning(files: files.count))
        for file in files { planFile(file) }
        for (key, record) in state.passes where defined[key] == nil {
            plan.removed.append(record)
        }
        plan.removed.sort { $0.key < $1.key }
        if collector.hasErrors { throw BuildFailure(diagnostics: collector.report) }
        plan.warnings = collector.report
        return plan
    }

    // MARK: - Files

    private mutating func planFile(_ file: String) {
        guard let bytes = AtomicFileSystem.readFile(file) else {
            collector.add(.error(at: SourceLocation(file: file), rule: "content.unreadable", "cannot read this file; check its permissions"))
            return
        }
        let hash = sha256Hex(bytes)
        if !validateOnly, let previous = state.contentFiles[file], previous.hash == hash, reuse(previous, file: file) {
            plan.contentFiles[file] = previous
            return
        }
        let (definitions, problems) = ContentLoader.definitions(in: file, bytes: bytes)
        collector.add(problems)
        var keys: [String] = []
        for definition in definitions {
            if let key = planDefinition(definition) { keys.append(key) }
        }
        checkSerialChange(file: file, keys: keys, definitions: definitions)
        plan.contentFiles[file] = BuildState.ContentFileRecord(hash: hash, passes: keys)
    }

    /// An unchanged file whose passes all keep their fingerprint is not parsed at all.
    private mutating func reuse(_ previous: BuildState.ContentFileRecord, file: String) -> Bool {
        var records: [BuildState.PassRecord] = []
        for key in previous.passes {
            guard let record = state.passes[key], defined[key] == nil,
                  case .success(let (_, templateFingerprint)) = template(named: record.templateName),
                  case .success(let identity) = identities.identity(passTypeIdentifier: record.passTypeIdentifier, teamIdentifier: record.teamIdentifier),
                  let images = imagesHash(record.imagePaths),
                  fingerprint(definitionHash: record.definitionHash, templateFingerprint: templateFingerprint,
                              identity: identity.fingerprint, imagesHash: images) == record.fingerprint,
                  FileManager.default.fileExists(atPath: "\(settings.outputDirectory)/\(record.path)")
            else { return false }
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
              keys[0].hasPrefix(old.passTypeIdentifier + "/")
        else { return }
        collector.add(.error(
            at: definitions[0].serialLocation, keyPath: ["serialNumber"], rule: "content.serial-changed",
            "serialNumber changed from \(old.serialNumber) to \(definitions[0].serialNumber). Wallet identifies a pass by its serial, so a device holding \(old.serialNumber) would never get this change. To retire \(old.serialNumber) and issue a new pass, delete this file and add the new pass in a new file; to keep updating the existing pass, put back serialNumber: \(old.serialNumber)"))
    }

    // MARK: - Passes

    /// Renders and validates one definition; returns its key when it is sound.
    private mutating func planDefinition(_ definition: PassDefinition) -> String? {
        let template: Template
        let templateFingerprint: String
        switch self.template(named: definition.templateName) {
        case .success(let loaded): (template, templateFingerprint) = loaded
        case .failure(let errors):
            if errors.diagnostics.first?.rule == "template.missing" {
                let available = TemplateLoader(directory: settings.templatesDirectory).templateNames()
                collector.add(.error(at: definition.templateLocation, keyPath: ["template"], rule: "content.template",
                                     "unknown template `\(definition.templateName)`; it must be a folder in \(settings.templatesDirectory)/ (available: \(available.isEmpty ? "none" : available.joined(separator: ", ")))"))
            } else {
                collector.add(errors.diagnostics)
            }
            return nil
        }
        var rendered: RenderedPass
        switch PassRenderer(configuration: settings.configuration).render(definition, template: template) {
        case .success(let pass): rendered = pass
        case .failure(let errors): collector.add(errors.diagnostics); return nil
        }
        let type = rendered.passTypeIdentifier ?? ""
        let key = "\(type)/\(definition.serialNumber)"
        if let first = defined[key] {
            collector.add(.error(at: definition.serialLocation, keyPath: ["serialNumber"], rule: "content.duplicate-serial",
                                 "serialNumber \(definition.serialNumber) is already used by another pass of \(type); serials must be unique per passTypeIdentifier",
                                 notes: [(first, "first defined here")]))
            return nil
        }
        defined[key] = definition.serialLocation

        // DESIGN.md: the token is derived unless the pass sets one.
        var tokenHash: String?
        if rendered.source["webServiceURL"] != nil {
            if let token = rendered.source["authenticationToken"]?.stringValue {
                tokenHash = sha256Hex(Array(token.utf8))
            } else if !type.isEmpty {
                let token = secret.authenticationToken(passTypeIdentifier: type, serialNumber: definition.serialNumber)
                rendered.source.set("authenticationToken", to: .scalar(.string(token), at: rendered.source["webServiceURL"]!.location))
                tokenHash = sha256Hex(Array(token.utf8))
            }
        }
        let json = rendered.source.jsonValue
        var problems = validator.validate(json, options: .init(allowsHTTPWebService: settings.allowsHTTPWebService))
        problems += ImageValidation.diagnostics(files: rendered.files, passJSON: json)
        let located = rendered.locate(problems)
        collector.add(located)
        guard !located.contains(where: \.isError), !type.isEmpty else { return nil }

        let previous = state.passes[key]
        if let previous, let old = previous.tokenHash, let new = tokenHash, old != new {
            collector.add(.error(
                at: rendered.source.location(at: ["authenticationToken"]), keyPath: ["authenticationToken"], rule: "pass.token-changed",
                "the authenticationToken of pass \(key) would change. Apple forbids changing the token of an existing pass: devices keep the old one and their updates would fail. Restore the previous PASSFORGE_TOKEN_SECRET (or authenticationToken); to really replace the pass, issue it under a new serial"))
            return nil
        }

        let team = rendered.source["teamIdentifier"]?.stringValue ?? ""
        let identity: SigningIdentities.Resolved
        switch identities.identity(passTypeIdentifier: type, teamIdentifier: team) {
        case .success(let resolved): identity = resolved
        case .failure(let error):
            collector.add(.error(at: rendered.source.location(at: ["passTypeIdentifier"]), keyPath: ["passTypeIdentifier"], rule: "signing.identity", error.description))
            return nil
        }
        guard checkCertificate(identity, type: type, team: team, rendered: rendered) else { return nil }

        var fileBytes: [String: [UInt8]] = ["pass.json": json.serialized(pretty: true)]
        for file in rendered.files { fileBytes[file.name] = file.bytes }
        let imagePaths = definition.images.map(\.path)
        let definitionHash = sha256Hex(definition.canonicalBytes)
        let fingerprint = fingerprint(definitionHash: definitionHash, templateFingerprint: templateFingerprint,
                                      identity: identity.fingerprint, imagesHash: imagesHash(imagePaths) ?? "")
        let capability = secret.downloadCapability(passTypeIdentifier: type, serialNumber: definition.serialNumber)
        let record = BuildState.PassRecord(
            passTypeIdentifier: type, serialNumber: definition.serialNumber, teamIdentifier: team,
            updateTag: previous?.updateTag ?? 0, etag: previous?.etag ?? "", size: previous?.size ?? 0,
            tokenHash: tokenHash, fingerprint: fingerprint, definitionHash: definitionHash,
            templateName: template.name, imagePaths: imagePaths, sourceFile: definition.file,
            downloadPath: "download/\(capability).pkpass",
            publicDownloadPath: rendered.download == .public ? "download/\(type)/\(definition.serialNumber).pkpass" : nil)
        if let previous, previous.fingerprint == fingerprint,
           FileManager.default.fileExists(atPath: "\(settings.outputDirectory)/\(previous.path)") {
            plan.unchanged.append(previous)
        } else if !validateOnly {
            plan.jobs.append(PackagingJob(record: record, files: fileBytes, identity: identity))
        }
        return key
    }

    /// pass-format-notes.md "Certificates": a pass whose passTypeIdentifier or
    /// teamIdentifier does not match the certificate fails on the device.
    private mutating func checkCertificate(_ resolved: SigningIdentities.Resolved, type: String, team: String, rendered: RenderedPass) -> Bool {
        let certificate = resolved.identity.certificate
        let subject = certificate.subject
        var ok = true
        if certificate.userID != type {
            collector.add(.error(at: rendered.source.location(at: ["passTypeIdentifier"]), keyPath: ["passTypeIdentifier"], rule: "signing.pass-type",
                                 "the signing certificate (\(subject)) is for \(certificate.userID ?? "no pass type"), not \(type); a pass signed with it fails on the device. Use the certificate of \(type) (`signing:` in passforge.yml or PASSFORGE_SIGNING_CERTIFICATE), or fix passTypeIdentifier"))
            ok = false
        }
        if certificate.organizationalUnit != team {
            collector.add(.error(at: rendered.source.location(at: ["teamIdentifier"]), keyPath: ["teamIdentifier"], rule: "signing.team",
                                 "the signing certificate belongs to team \(certificate.organizationalUnit ?? "(none)"), not \(team); set teamIdentifier to the certificate's team (its subject OU)"))
            ok = false
        }
        let now = Date()
        if !certificate.isValid(at: now) {
            let expired = certificate.notAfter < now
            collector.add(.error(at: rendered.source.location(at: ["passTypeIdentifier"]), keyPath: ["passTypeIdentifier"], rule: "signing.expired",
                                 expired ? "the signing certificate for \(type) expired on \(iso8601(certificate.notAfter)); passes signed with it do not install. Renew the Pass Type ID certificate in the Apple Developer portal"
                                 : "the signing certificate for \(type) is not valid before \(iso8601(certificate.notBefore)); check the machine's clock"))
            ok = false
        } else if certificate.notAfter.timeIntervalSince(now) < 30 * 86_400 {
            collector.add(.warning(at: rendered.source.location(at: ["passTypeIdentifier"]), keyPath: ["passTypeIdentifier"], rule: "signing.expiring",
                                   "the signing certificate for \(type) expires on \(iso8601(certificate.notAfter)); renew it soon"))
        }
        if rendered.source["nfc"] != nil, certificate.commonName?.contains("NFC") != true, !resolved.isDevelopment {
            collector.add(.warning(at: rendered.source.location(at: ["nfc"]), keyPath: ["nfc"], rule: "signing.nfc",
                                   "the pass has an nfc dictionary but the certificate (\(certificate.commonName ?? subject)) is not an NFC-enabled Pass Type ID certificate; the NFC payload will not work"))
        }
        return ok
    }

    // MARK: - Inputs

    private mutating func template(named name: String) -> Result<(Template, String), ContentErrors> {
        if let cached = templates[name] { return cached }
        let result = TemplateLoader(directory: settings.templatesDirectory).load(name).map { template -> (Template, String) in
            var hasher = FingerprintHasher()
            hasher.add("pass.json", template.passJSONBytes)
            for file in template.files { hasher.add(file.name, file.bytes) }
            return (template, hasher.finalize())
        }
        if case .failure(let errors) = result, errors.diagnostics.first?.rule != "template.missing" {
            // Report template problems once, not once per pass.
            collector.add(errors.diagnostics)
            templates[name] = .failure(ContentErrors([]))
            return templates[name]!
        }
        if case .success(let (template, _)) = result {
            collector.add(template.warnings)
        }
        templates[name] = result
        return result
    }

    private func imagesHash(_ paths: [String]) -> String? {
        var hasher = FingerprintHasher()
        for path in paths {
            guard let bytes = AtomicFileSystem.readFile(path) else { return nil }
            hasher.add(path, bytes)
        }
        return hasher.finalize()
    }

    private func fingerprint(definitionHash: String, templateFingerprint: String, identity: String, imagesHash: String) -> String {
        var hasher = FingerprintHasher()
        hasher.add("context", contextFingerprint)
        hasher.add("definition", definitionHash)
        hasher.add("template", templateFingerprint)
        hasher.add("identity", identity)
        hasher.add("images", imagesHash)
        return hasher.finalize()
    }
}

func iso8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: date)
}
