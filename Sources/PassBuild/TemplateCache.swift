import PassContent
import PassModel
import PassPackage
import Synchronization
import WalletTree

/// A template file readied for packaging, with where it came from: a pass
/// whose file of that name has another source (its own image) packages its own.
struct PreparedTemplateFile: Sendable {
    var source: String
    var file: PreparedPassFile
}

/// Templates loaded once each, shared by the threads that render passes.
final class TemplateCache: Sendable {
    private struct State {
        var templates: [String: Result<(template: Template, fingerprint: String), ContentErrors>] = [:]
        var reported: [ContentDiagnostic] = []
        var imageDiagnostics: [String: [Diagnostic]] = [:]
        /// Template name → its pass.strings tables, by language.
        var stringsTables: [String: [String: [String: String]]] = [:]
        /// Template name → its files prepared for packaging, by name.
        var preparedFiles: [String: [String: PreparedTemplateFile]] = [:]
    }

    private let loader: TemplateLoader
    private let state = Mutex(State())

    init(loader: TemplateLoader) { self.loader = loader }

    /// Template problems and warnings, once per template however many passes use it.
    var diagnostics: [ContentDiagnostic] { state.withLock { $0.reported } }

    /// The template and a hash of every byte it is made of.
    func template(named name: String) -> Result<(template: Template, fingerprint: String), ContentErrors> {
        state.withLock { state in
            if let cached = state.templates[name] { return cached }
            let result = loader.load(name).map { template -> (template: Template, fingerprint: String) in
                var hasher = FingerprintHasher()
                hasher.add("pass.json", template.passJSONBytes)
                for file in template.files { hasher.add(file.name, file.bytes) }
                return (template, hasher.finalize())
            }
            switch result {
            case .success(let loaded): state.reported += loaded.template.warnings
            case .failure(let errors) where errors.diagnostics.first?.rule != "template.missing":
                state.reported += errors.diagnostics
            case .failure: break
            }
            state.templates[name] = result
            return result
        }
    }

    /// Image rules depend only on the files and the style: checked once per template and style.
    func imageDiagnostics(key: String, _ compute: () -> [Diagnostic]) -> [Diagnostic] {
        if let cached = state.withLock({ $0.imageDiagnostics[key] }) { return cached }
        let result = compute()
        state.withLock { $0.imageDiagnostics[key] = result }
        return result
    }

    /// The pass.strings tables of `rendered`'s files (by language), parsed once per template when
    /// every strings file is the template's own (none has placeholders filled per pass, none is replaced
    /// by a file of the pass's own), else per pass.
    func stringsTables(of rendered: RenderedPass, template: Template) -> [String: [String: String]] {
        let parse = { PassStrings.tables(of: rendered.files.lazy.map { ($0.name, $0.bytes) }) }
        guard !template.localizations.contains(where: \.hasPlaceholders),
            !rendered.definition.images.contains(where: { $0.name.hasSuffix(".strings") })
        else { return parse() }
        if let cached = state.withLock({ $0.stringsTables[template.name] }) { return cached }
        let tables = parse()
        state.withLock { $0.stringsTables[template.name] = tables }
        return tables
    }

    /// The template's files with their SHA-1s and zip entries, computed once
    /// per template and build; every pass of the template reuses them. A
    /// file that cannot be part of a pass is left out, so that the pass
    /// holding it reports why when it is packaged.
    func preparedFiles(of template: Template) -> [String: PreparedTemplateFile] {
        if let cached = state.withLock({ $0.preparedFiles[template.name] }) { return cached }
        var prepared: [String: PreparedTemplateFile] = [:]
        for file in template.files {
            if let ready = try? PreparedPassFile(name: file.name, bytes: file.bytes, digest: template.kind.digest) {
                prepared[file.name] = PreparedTemplateFile(source: file.source, file: ready)
            }
        }
        return state.withLock { state in
            if let raced = state.preparedFiles[template.name] { return raced }
            state.preparedFiles[template.name] = prepared
            return prepared
        }
    }
}
