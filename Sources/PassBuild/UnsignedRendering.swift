import ConcurrencySupport
import WalletTree
import AtomicFiles
import Foundation
import PassContent
import PassModel

/// One pass (or order) as the build would package it, before signing: for
/// `passforge preview` and `passforge diff`.
package struct UnsignedPass: Sendable {
    /// `passTypeIdentifier`, or an order's `orderTypeIdentifier`.
    package var passTypeIdentifier: String
    /// `serialNumber`, or an order's `orderIdentifier`.
    package var serialNumber: String
    package var templateName: String
    /// The content file that defines it.
    package var sourceFile: String
    /// The pass.json (order.json) the build would sign, authenticationToken included. An order's
    /// `updatedAt` is the signing build's, so it is absent here.
    package var passJSON: JSONValue
    /// Images and `<lang>.lproj/pass.strings` (`order.strings`), as they go into the package.
    package var files: [PackageFile]
    /// This pass's warnings (errors stop the build, and are in `UnsignedRendering.diagnostics`).
    package var warnings: [ContentDiagnostic]
    /// A pass or an order.
    package var kind: WalletItemKind = .pass

    /// `passTypeIdentifier/serialNumber` (`orderTypeIdentifier/orderIdentifier`), as the build state names items.
    package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }

    package init(passTypeIdentifier: String, serialNumber: String, templateName: String, sourceFile: String, passJSON: JSONValue,
                 files: [PackageFile], warnings: [ContentDiagnostic], kind: WalletItemKind = .pass) {
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
        self.templateName = templateName
        self.sourceFile = sourceFile
        self.passJSON = passJSON
        self.files = files
        self.warnings = warnings
        self.kind = kind
    }
}

/// Every pass of a project rendered and validated as `passforge build` does
/// (the same loader, template cache, renderer and per-pass checks), signed
/// by nobody and written nowhere.
package struct UnsignedRendering: Sendable {
    /// The sound passes, in content order.
    package var passes: [UnsignedPass] = []
    /// Every problem, errors first-class: the build would refuse when one is an error.
    package var diagnostics: [ContentDiagnostic] = []
    /// Content files read, for the preview's watcher.
    package var contentFiles: [String] = []

    package var errors: [ContentDiagnostic] { diagnostics.filter(\.isError) }
}

extension PassBuilder {
    /// Renders every pass without signing. The signing identity is only
    /// looked at for its certificate checks, with the development chain
    /// allowed (nothing is signed with it). The token secret is the build's;
    /// where there is none (CI), a fixed stand-in so that both sides of a
    /// diff agree.
    package func renderWithoutSigning() -> UnsignedRendering {
        var settings = settings
        settings.allowsDevelopmentSigning = true
        var rendering = UnsignedRendering()
        let paths: [String]
        do { paths = try ContentLoader(directory: settings.contentDirectory).contentFiles() } catch {
            rendering.diagnostics = error.diagnostics
            return rendering
        }
        rendering.contentFiles = paths
        let secret = (try? TokenSecret.resolve(environment: settings.environment, projectStateDirectory: settings.projectStateDirectory))
            ?? TokenSecret("passforge-preview-token-secret", origin: "preview")
        let templates = TemplateCache(loader: settings.templateLoader)
        let evaluator = PassEvaluator(settings: settings, state: BuildState(), secret: secret, identities: SigningIdentities(settings: settings),
                                      templates: templates, validateOnly: true)
        var collector = DiagnosticCollector()
        var definitions: [PassDefinition] = []
        let boundary = settings.projectBoundary
        for path in paths {
            let bytes: [UInt8]
            switch boundary.readListedFile(path) {
            case .success(let read): bytes = read
            case .failure(let refusal):
                collector.add(BuildPlanner.unreadable(path, refusal, boundary: boundary))
                continue
            }
            let (found, problems) = ContentLoader.definitions(in: path, bytes: bytes)
            collector.add(problems)
            definitions += found
        }
        let renderer = evaluator.renderer
        let rendered = ParallelLoop.map(definitions, jobs: settings.jobs) { definition -> (PassEvaluator.Evaluation, UnsignedPass?) in
            let evaluation = evaluator.evaluate(definition)
            guard evaluation.key != nil, case .success(let template) = templates.template(named: definition.templateName),
                  case .success(var pass) = renderer.render(definition, template: template.template)
            else { return (evaluation, nil) }
            let type = pass.typeIdentifier ?? ""
            if let webService = pass.source["webServiceURL"], pass.source["authenticationToken"] == nil {
                let token = secret.authenticationToken(passTypeIdentifier: type, serialNumber: definition.serialNumber)
                pass.source.set("authenticationToken", to: .scalar(.string(token), at: webService.location))
            }
            return (evaluation, UnsignedPass(passTypeIdentifier: type, serialNumber: definition.serialNumber, templateName: definition.templateName,
                                             sourceFile: definition.file, passJSON: pass.source.jsonValue, files: pass.files,
                                             warnings: evaluation.diagnostics.filter { !$0.isError }, kind: pass.kind))
        }
        var defined: [String: SourceLocation] = [:]
        for (evaluation, pass) in rendered {
            collector.add(evaluation.diagnostics)
            guard let pass else { continue }
            if let first = defined[pass.key] {
                collector.add(.error(at: evaluation.serialLocation, keyPath: ["serialNumber"], rule: "content.duplicate-serial",
                                     "serialNumber \(pass.serialNumber) is already used by another pass of \(pass.passTypeIdentifier); serials must be unique per passTypeIdentifier",
                                     notes: [(first, "first defined here")]))
                continue
            }
            defined[pass.key] = evaluation.serialLocation
            rendering.passes.append(pass)
        }
        collector.add(templates.diagnostics)
        rendering.diagnostics = collector.report
        return rendering
    }
}
