import PassContent
import PassModel
import Synchronization

/// Templates loaded once each, shared by the threads that render passes.
final class TemplateCache: Sendable {
    private struct State {
        var templates: [String: Result<(template: Template, fingerprint: String), ContentErrors>] = [:]
        var reported: [ContentDiagnostic] = []
        var imageDiagnostics: [String: [Diagnostic]] = [:]
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
            case .failure(let errors) where errors.diagnostics.first?.rule != "template.missing": state.reported += errors.diagnostics
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
}
