import AtomicFiles
import Barcodes
import Foundation
import PassContent
import PassModel
import PassPackage
import PassRender
import WalletTree

/// Renders and validates one pass definition; safe to call from many threads.
struct PassEvaluator: Sendable {
    /// Bumped when rendering changes, so every pass is rebuilt once.
    static let rendererVersion = "passforge-render-1"

    struct Evaluation: Sendable {
        var diagnostics: [ContentDiagnostic] = []
        /// `type/serial` when the pass is sound.
        var key: String?
        /// A pass or an order, once known (from its template, or its previous record).
        var kind: WalletItemKind?
        var serialLocation: SourceLocation
        var tokenLocation: SourceLocation
        var tokenHash: String?
        /// Set when nothing the pass is made of changed.
        var unchanged: BuildState.ItemRecord?
        /// Set when it has to be signed again.
        var job: PackagingJob?
        /// The job signed and staged, when the planner packages as it goes.
        var signed: Result<SignedPass, any Error>?
        /// The item as it would be signed, when the evaluator collects renders (preview, diff).
        var unsigned: UnsignedPass?
    }

    let settings: BuildSettings
    let state: BuildState
    let secret: TokenSecret
    let identities: SigningIdentities
    let templates: TemplateCache
    /// What the consumer of the pipeline (`ItemConsumer`) takes of each sound item.
    enum Product: Sendable {
        /// A packaging job for each item that changed (`Evaluation.job`); unchanged items found as such.
        case job
        /// Each item as it would be signed (`Evaluation.unsigned`), checked but never found unchanged.
        case render
        /// Only the diagnostics.
        case diagnostics
    }
    let product: Product
    /// Validate or render only: every item is evaluated in full, none is found unchanged, none gets a job.
    var validateOnly: Bool { product != .job }
    /// The update tag of the build that signs: an order's `updatedAt` is its time. Nil when nothing is signed.
    let updateTag: Int64?
    let validator = PassValidator()
    let renderer: PassRenderer
    let contextFingerprint: String
    /// The pass types of the previous passes, to find a definition's previous pass by its serial and skip
    /// rendering it; with many types, the keys of the previous passes by serial instead.
    let previousTypes: [String]
    let previousKeysBySerial: [String: [String]]
    /// Which pass files are in the output folder.
    let passFiles: PassFilePresence

    init(
        settings: BuildSettings, state: BuildState, secret: TokenSecret, identities: SigningIdentities,
        templates: TemplateCache, product: Product, updateTag: Int64? = nil
    ) {
        self.updateTag = updateTag
        self.product = product
        self.settings = settings
        self.state = state
        self.secret = secret
        self.identities = identities
        self.templates = templates
        renderer = PassRenderer(configuration: settings.configuration, boundary: settings.projectBoundary)
        var hasher = FingerprintHasher()
        hasher.add("renderer", Self.rendererVersion)
        hasher.add("config", settings.configuration.passDefaults.jsonValue.serialized())
        // passforge.yml's order keys (orderTypeIdentifier, webServiceURL) are an input of every order; hashed only
        // when set, so a project without orders keeps its fingerprints.
        if settings.configuration.orderDefaults.members?.isEmpty == false {
            hasher.add("orderConfig", settings.configuration.orderDefaults.jsonValue.serialized())
        }
        hasher.add("http", settings.allowsHTTPWebService ? "1" : "0")
        hasher.add("secret", secret.fingerprint)
        contextFingerprint = hasher.finalize()
        // Most passes share a type: one comparison each instead of hashing 100,000 strings into a set.
        // Each type is of one kind (the build refuses one identifier for passes and orders).
        var types: [String: WalletItemKind] = [:]
        var lastType: String? = nil
        for record in state.passes.values {
            let type = record.typeIdentifier
            if type != lastType {
                types[type] = record.kind
                lastType = type
            }
        }
        if types.count <= 16 {
            previousTypes = types.keys.sorted()
            previousKeysBySerial = [:]
        } else {
            previousTypes = []
            var bySerial: [String: [String]] = [:]
            for (key, record) in state.passes { bySerial[record.identifier, default: []].append(key) }
            previousKeysBySerial = bySerial
        }
        passFiles = PassFilePresence(
            directory: settings.outputDirectory,
            types: settings.requiresLocalPassFiles && product == .job ? types : [:])
    }

    /// True when a pass built before would come out the same: same entry,
    /// template, images, configuration, secret and identity, and its file is there.
    func isUnchanged(_ record: BuildState.ItemRecord, definitionHash: String? = nil) -> Bool {
        var memo = UnchangedCheckMemo()
        return isUnchanged(record, definitionHash: definitionHash, memo: &memo)
    }

    /// The template and identity fingerprints `isUnchanged` found for the last record's template, type and team.
    /// A thread that checks many records keeps one: the next record of the same ones (most often all of them)
    /// is checked without looking them up again, each lookup taking a lock shared by every thread.
    struct UnchangedCheckMemo {
        fileprivate var templateName = "", passTypeIdentifier = "", teamIdentifier = ""
        fileprivate var fingerprints: (template: String, identity: String)?
    }

    /// `isUnchanged`, with the lookups of the last record's template and identity kept in `memo`.
    func isUnchanged(_ record: BuildState.ItemRecord, definitionHash: String? = nil, memo: inout UnchangedCheckMemo)
        -> Bool
    {
        // Strings shared by the decoded records: compared without their bytes.
        if memo.fingerprints == nil || memo.templateName != record.templateName
            || memo.passTypeIdentifier != record.typeIdentifier
            || memo.teamIdentifier != record.teamIdentifier
        {
            guard case .success(let template) = templates.template(named: record.templateName),
                case .success(let identity) = identities.identity(
                    passTypeIdentifier: record.typeIdentifier,
                    teamIdentifier: record.teamIdentifier, kind: record.kind)
            else { return false }
            memo = UnchangedCheckMemo(
                templateName: record.templateName, passTypeIdentifier: record.typeIdentifier,
                teamIdentifier: record.teamIdentifier, fingerprints: (template.fingerprint, identity.fingerprint))
        }
        guard let fingerprints = memo.fingerprints, let images = imagesHash(record.imagePaths) else { return false }
        // Compared as kept in the record, not spelled out (100,000 records are checked on each build).
        let computed = fingerprint(
            definitionHash: definitionHash ?? record.definitionHash, templateFingerprint: fingerprints.template,
            identity: fingerprints.identity, imagesHash: images)
        return PackedDigest(computed) == record.packedFingerprint && hasPassFile(record)
    }

    /// Whether an unchanged pass's bytes are where the build can reuse them:
    /// in the output folder, or at the published tree the state came from.
    private func hasPassFile(_ record: BuildState.ItemRecord) -> Bool {
        !settings.requiresLocalPassFiles || passFiles.contains(record)
    }

    /// Evaluates one definition: render it with its template, apply Apple's rules and the certificate's, and
    /// find whether it changed; for a changed item the consumer asked a job of, its packaging job.
    func evaluate(_ definition: PassDefinition) -> Evaluation {
        var evaluation = Evaluation(serialLocation: definition.serialLocation, tokenLocation: definition.location)
        if let problem = unknownOffer(definition) {
            evaluation.diagnostics.append(problem)
            return evaluation
        }
        let definitionHash = sha256Hex(definition.canonicalBytes)
        // Fast path: the entry is byte-for-byte what built an existing pass.
        if let previous = unchangedByDefinition(definition, hash: definitionHash) {
            evaluation.key = previous.key
            evaluation.kind = previous.kind
            evaluation.tokenHash = previous.tokenHash
            evaluation.unchanged = previous
            return evaluation
        }
        guard let (template, templateFingerprint) = template(of: definition, into: &evaluation) else {
            return evaluation
        }
        var rendered: RenderedPass
        switch renderer.render(definition, template: template) {
        case .success(let pass): rendered = pass
        case .failure(let errors):
            evaluation.diagnostics = errors.diagnostics
            return evaluation
        }
        let kind = rendered.kind
        evaluation.kind = kind
        let type = rendered.typeIdentifier ?? ""
        let token = authenticationToken(of: &rendered, type: type, definition: definition, into: &evaluation)
        // A pass's JSON is made here, for its rules; an order's once it is signed, with its updatedAt (`job`).
        let passJSONValue: JSONValue? = kind == .pass ? .some(rendered.source.jsonValue) : .none
        evaluation.diagnostics += rules(of: rendered, json: passJSONValue, definition: definition, template: template)
        guard !evaluation.diagnostics.contains(where: \.isError), !type.isEmpty,
            let (identity, team) = identity(of: rendered, type: type, into: &evaluation)
        else { return evaluation }

        let key = ItemKey.text(typeIdentifier: type, identifier: definition.serialNumber)
        evaluation.key = key
        if product == .render {
            evaluation.unsigned = UnsignedPass(
                passTypeIdentifier: type, serialNumber: definition.serialNumber, templateName: definition.templateName,
                sourceFile: definition.file, passJSON: passJSONValue ?? rendered.source.jsonValue,
                files: rendered.files, warnings: [], kind: kind)
        }
        let fingerprint = fingerprint(
            definitionHash: definitionHash, templateFingerprint: templateFingerprint,
            identity: identity.fingerprint, imagesHash: imagesHash(definition.images.map(\.path)) ?? "")
        let previous = state.passes[key]
        if let previous, previous.fingerprint == fingerprint, hasPassFile(previous) {
            evaluation.unchanged = previous
            return evaluation
        }
        guard !validateOnly else { return evaluation }
        let item = SoundItem(
            rendered: rendered, definition: definition, template: template, type: type, team: team, token: token,
            identity: identity, fingerprint: fingerprint, definitionHash: definitionHash, passJSON: passJSONValue)
        switch job(for: item, previous: previous, tokenHash: evaluation.tokenHash) {
        case .success(let job): evaluation.job = job
        case .failure(let tooLarge):
            evaluation.diagnostics += tooLarge.problems
            evaluation.key = nil
        }
        return evaluation
    }

    /// An offer passforge.yml does not define.
    private func unknownOffer(_ definition: PassDefinition) -> ContentDiagnostic? {
        guard let offer = definition.offer, !settings.configuration.offers.contains(where: { $0.name == offer.name })
        else { return nil }
        let defined = settings.configuration.offers.map(\.name)
        return .error(
            at: offer.location, keyPath: ["offer"], rule: "content.offer",
            "unknown offer `\(offer.name)`; passforge.yml's offers: defines \(defined.isEmpty ? "none" : defined.joined(separator: ", ")). Add `\(offer.name): { bit: 0 }` under offers:, or fix the name"
        )
    }

    /// The previous item an entry that is byte for byte the same built, when nothing else it is made of changed.
    private func unchangedByDefinition(_ definition: PassDefinition, hash: String) -> BuildState.ItemRecord? {
        guard !validateOnly else { return nil }
        let previousKeys =
            previousTypes.isEmpty
            ? previousKeysBySerial[definition.serialNumber] ?? []
            : previousTypes.map { "\($0)/\(definition.serialNumber)" }
        guard
            let previous = previousKeys.lazy.compactMap({ state.passes[$0] }).first(where: {
                $0.definitionHash == hash && $0.templateName == definition.templateName
                    && $0.sourceFile == definition.file
            }), isUnchanged(previous, definitionHash: hash)
        else { return nil }
        return previous
    }

    /// The definition's template and its fingerprint; nil, with the problem noted, when it cannot be loaded.
    private func template(of definition: PassDefinition, into evaluation: inout Evaluation) -> (Template, String)? {
        switch templates.template(named: definition.templateName) {
        case .success(let loaded): return loaded
        case .failure(let errors):
            if errors.diagnostics.first?.rule == "template.missing" {
                let available = TemplateLoader(directory: settings.templatesDirectory).templateNames()
                evaluation.diagnostics.append(
                    .error(
                        at: definition.templateLocation, keyPath: ["template"], rule: "content.template",
                        "unknown template `\(definition.templateName)`; it must be a folder in \(settings.templatesDirectory)/ (available: \(available.isEmpty ? "none" : available.joined(separator: ", ")))"
                    ))
            }
            return nil
        }
    }

    /// The item's authenticationToken: derived from the token secret unless the item sets one (which must suit a
    /// static host). Sets it in the render, and the token's hash and location in `evaluation`.
    private func authenticationToken(
        of rendered: inout RenderedPass, type: String, definition: PassDefinition,
        into evaluation: inout Evaluation
    ) -> String? {
        guard let webService = rendered.source["webServiceURL"] else { return nil }
        evaluation.tokenLocation = webService.location
        if let custom = rendered.source["authenticationToken"]?.stringValue {
            evaluation.tokenLocation = rendered.source.location(at: ["authenticationToken"])
            evaluation.tokenHash = sha256Hex(Array(custom.utf8))
            if custom.count >= 16, !StaticHostToken.isValid(custom) {
                evaluation.diagnostics.append(
                    .error(
                        at: evaluation.tokenLocation, keyPath: ["authenticationToken"], rule: "token.static-host",
                        "authenticationToken must be \(StaticHostToken.description) so that a static host can find the pass by its token (the file name contains it); leave the key out to get a derived token, or choose one that fits"
                    ))
            }
            return custom
        }
        guard !type.isEmpty else { return nil }
        let derived = secret.authenticationToken(passTypeIdentifier: type, serialNumber: definition.serialNumber)
        rendered.source.set("authenticationToken", to: .scalar(.string(derived), at: webService.location))
        evaluation.tokenHash = sha256Hex(Array(derived.utf8))
        return derived
    }

    /// Apple's rules on a pass's JSON (or an order's), and the package's size before its JSON is written out.
    private func rules(of rendered: RenderedPass, json: JSONValue?, definition: PassDefinition, template: Template)
        -> [ContentDiagnostic]
    {
        var problems: [ContentDiagnostic]
        if let json {
            problems = passDiagnostics(rendered, json: json, definition: definition, template: template)
        } else {
            // Apple's order rules, each at the template or content line that wrote the value.
            // A createdAt after this build's tag (or, for validate, now) is refused: see checkCreatedAtIsPast.
            let checkedAt = updateTag.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
            problems = rendered.orderDiagnostics(
                allowsHTTPWebService: settings.allowsHTTPWebService, checkedAt: checkedAt)
        }
        return problems
            + packageSizeProblems(
                rendered, filesSize: rendered.files.reduce(0) { $0 + $1.bytes.count }, passJSONSize: 0)
    }

    /// The identity that signs the item, with its team, and the certificate's checks; nil when it cannot sign it.
    private func identity(
        of rendered: RenderedPass, type: String,
        into evaluation: inout Evaluation
    ) -> (SigningIdentities.Resolved, String)? {
        // order.json has no teamIdentifier: an order's team is passforge.yml's, when it names one.
        let kind = rendered.kind
        let team =
            (kind == .pass ? rendered.source["teamIdentifier"] : settings.configuration.passDefaults["teamIdentifier"])?
            .stringValue ?? ""
        let identity: SigningIdentities.Resolved
        switch identities.identity(passTypeIdentifier: type, teamIdentifier: team, kind: kind) {
        case .success(let resolved): identity = resolved
        case .failure(let error):
            let typeKey = kind.typeIdentifierKey
            evaluation.diagnostics.append(
                .error(
                    at: rendered.source.location(at: [.key(typeKey)]), keyPath: [.key(typeKey)],
                    rule: "signing.identity", error.description))
            return nil
        }
        let certificateProblems = CertificateCheck.diagnostics(identity, type: type, team: team, rendered: rendered)
        evaluation.diagnostics += certificateProblems
        return certificateProblems.contains(where: \.isError) ? nil : (identity, team)
    }

    /// What `job(for:)` needs of a sound item.
    private struct SoundItem {
        var rendered: RenderedPass
        var definition: PassDefinition
        var template: Template
        var type: String, team: String, token: String?
        var identity: SigningIdentities.Resolved
        var fingerprint: String, definitionHash: String
        /// A pass's JSON; nil for an order, whose JSON is made here with its updatedAt.
        var passJSON: JSONValue?
    }

    private struct TooLarge: Error {
        var problems: [ContentDiagnostic]
    }

    /// The packaging job of a changed item: its record, its JSON written out, its files prepared.
    private func job(for item: SoundItem, previous: BuildState.ItemRecord?, tokenHash: String?) -> Result<
        PackagingJob, TooLarge
    > {
        let (rendered, definition, type, kind) = (item.rendered, item.definition, item.type, item.rendered.kind)
        let templateFiles = templates.preparedFiles(of: item.template)
        var prepared: [PreparedPassFile] = []
        var own: [PackageFile] = []
        for file in rendered.files {
            if let shared = templateFiles[file.name], shared.source == file.source {
                prepared.append(shared.file)
            } else {
                own.append(file)
            }
        }
        let capability = secret.downloadCapability(passTypeIdentifier: type, serialNumber: definition.serialNumber)
        let record = BuildState.ItemRecord(
            typeIdentifier: type, identifier: definition.serialNumber, teamIdentifier: item.team,
            updateTag: previous?.updateTag ?? 0, etag: previous?.etag ?? "", size: previous?.size ?? 0,
            tokenHash: tokenHash, fingerprint: item.fingerprint, definitionHash: item.definitionHash,
            templateName: item.template.name, imagePaths: definition.images.map(\.path), sourceFile: definition.file,
            downloadPath: TreeLayout.capabilityDownloadPath(capability: capability, kind: kind),
            publicDownloadPath: rendered.download == .public
                ? TreeLayout.publicDownloadPath(kind: kind, type: type, identifier: definition.serialNumber) : nil,
            tokenPath: item.token.map {
                BuildState.ItemRecord.tokenPath(typeIdentifier: type, identifier: definition.serialNumber, token: $0)
            },
            offer: definition.offer?.name, kind: kind)
        let json =
            item.passJSON
            ?? {
                // A new order's updatedAt equals its createdAt (Apple's Order page); a changed order's is the time of
                // the tag of the build that signs it, later than createdAt (refused when in the future) and than
                // every earlier tag, so it strictly increases.
                if previous == nil { return rendered.withUpdatedAtOfNewOrder().source.jsonValue }
                let tag = updateTag ?? Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
                return rendered.withUpdatedAt(millisecondsSince1970: tag).source.jsonValue
            }()
        let passJSON = json.serialized(pretty: true)
        let filesSize = rendered.files.reduce(0) { $0 + $1.bytes.count }
        let tooLarge = packageSizeProblems(rendered, filesSize: filesSize, passJSONSize: passJSON.count)
        guard tooLarge.isEmpty else { return .failure(TooLarge(problems: tooLarge)) }
        return .success(
            PackagingJob(
                record: record, passJSON: passJSON, templateFiles: prepared, ownFiles: own, identity: item.identity))
    }

    /// Apple's pass rules on `json`, each at the template or content line that wrote the value.
    private func passDiagnostics(
        _ rendered: RenderedPass, json: JSONValue, definition: PassDefinition, template: Template
    ) -> [ContentDiagnostic] {
        // A changeMessage may be a pass.strings key: its rule checks what each language resolves it to.
        let localizations =
            PassValidator.checksLocalizedText(in: json)
            ? templates.stringsTables(of: rendered, template: template) : [:]
        var problems = validator.validate(
            json, options: .init(allowsHTTPWebService: settings.allowsHTTPWebService, localizations: localizations))
        problems += BarcodeValidation.diagnostics(for: json)
        // The image rules depend on the template's files, the style and the style scheme (a poster
        // event ticket needs artwork): passes of one template share the result when these agree.
        let imageKey =
            definition.images.isEmpty
            ? template.name + "|" + PassStyle.allCases.filter { json[$0.key] != nil }.map(\.key).joined(separator: ",")
                + "|"
                + (PassStyleScheme.active(in: json)?.rawValue ?? "")
            : nil
        problems +=
            imageKey.map { key in
                templates.imageDiagnostics(key: key) {
                    ImageValidation.diagnostics(files: rendered.files, passJSON: json)
                }
            }
            ?? ImageValidation.diagnostics(files: rendered.files, passJSON: json)
        return rendered.locate(problems)
    }

    /// The build refuses a pass that `inspect`, or a reader of any package this build makes, would
    /// refuse: more files, or more bytes in all, than `PackageLimits` allows (manifest.json and the
    /// signature counted in). `passJSONSize` is 0 until the pass.json is written out.
    func packageSizeProblems(_ rendered: RenderedPass, filesSize: Int, passJSONSize: Int) -> [ContentDiagnostic] {
        let fileCount = rendered.files.count + 3  // pass.json, manifest.json, signature
        if fileCount > PackageLimits.maximumFileCount {
            return [
                .error(
                    at: rendered.definition.location, rule: "package.file-count",
                    "\(rendered.kind.noun) \(rendered.serialNumber) would hold \(fileCount) files, more than the \(PackageLimits.maximumFileCount) a \(rendered.kind.noun) may hold; remove images or localizations from its template"
                )
            ]
        }
        let total = filesSize + passJSONSize + PackageLimits.signingReserve
        guard total > PackageLimits.maximumTotalSize else { return [] }
        let largest = rendered.files.sorted { $0.bytes.count > $1.bytes.count }.prefix(3)
            .map { "\($0.name) \(ImageLimits.megabytes($0.bytes.count))" }.joined(separator: ", ")
        return [
            .error(
                at: rendered.definition.location, rule: "package.size",
                "\(rendered.kind.noun) \(rendered.serialNumber) would be \(ImageLimits.megabytes(total)) with its signature, more than the \(ImageLimits.megabytes(PackageLimits.maximumTotalSize)) a \(rendered.kind.noun) may be (`passforge inspect` and this build refuse larger ones); its largest files: \(largest)\(passJSONSize > 0 ? ", pass.json \(ImageLimits.megabytes(passJSONSize))" : ""). Make the images smaller"
            )
        ]
    }

    private static let noImagesHash = FingerprintHasher().finalize()

    private func imagesHash(_ paths: [String]) -> String? {
        if paths.isEmpty { return Self.noImagesHash }
        var hasher = FingerprintHasher()
        for path in paths {
            guard let bytes = AtomicFileSystem.readFile(path) else { return nil }
            hasher.add(path, bytes)
        }
        return hasher.finalize()
    }

    private func fingerprint(definitionHash: String, templateFingerprint: String, identity: String, imagesHash: String)
        -> String
    {
        var hasher = FingerprintHasher()
        hasher.add("context", contextFingerprint)
        hasher.add("definition", definitionHash)
        hasher.add("template", templateFingerprint)
        hasher.add("identity", identity)
        hasher.add("images", imagesHash)
        return hasher.finalize()
    }
}

extension BuildSettings {
    /// The folders whose files may go into a pass, links followed: templates and content.
    var projectBoundary: ProjectBoundary { ProjectBoundary(folders: [templatesDirectory, contentDirectory]) }

    /// The loader of the project's templates, which may hold links to files in either folder.
    var templateLoader: TemplateLoader { TemplateLoader(directory: templatesDirectory, boundary: projectBoundary) }
}
