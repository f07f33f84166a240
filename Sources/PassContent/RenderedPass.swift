import PassModel

/// A pass rendered from its definition: the pass.json (with where each part
/// came from) and the files that go into the package.
public struct RenderedPass: Sendable {
    public var definition: PassDefinition
    /// The full pass.json, every value tagged with the line that produced it.
    public var source: SourceNode
    /// Images and localization files: the template's, with the pass's own images replacing them by name.
    public var files: [PackageFile]
    public var download: DownloadPolicy

    public var passTypeIdentifier: String? { source["passTypeIdentifier"]?.stringValue }
    public var serialNumber: String { definition.serialNumber }

    /// Maps PassModel diagnostics (key paths into pass.json) to the lines an
    /// editor has to change.
    public func locate(_ diagnostics: [Diagnostic]) -> [ContentDiagnostic] {
        diagnostics.map { diagnostic in
            let location: SourceLocation
            if case .key(let name)? = diagnostic.keyPath.components.first, let file = files.first(where: { $0.name == name }) {
                location = SourceLocation(file: file.source)
            } else {
                location = source.location(at: diagnostic.keyPath)
            }
            var message = "pass \(definition.serialNumber): \(diagnostic.message)"
            var notes: [(SourceLocation, String)] = []
            if location.file != definition.file {
                notes.append((definition.location, "pass \(definition.serialNumber) is defined here"))
            } else {
                message = diagnostic.message
            }
            return ContentDiagnostic(diagnostic.severity, at: location, keyPath: diagnostic.keyPath,
                                     rule: diagnostic.rule, message, notes: notes)
        }
    }
}
