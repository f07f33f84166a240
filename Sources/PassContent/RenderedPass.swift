import PassModel

/// A pass rendered from its definition: the pass.json (with where each part
/// came from) and the files that go into the package.
package struct RenderedPass: Sendable {
    package var definition: PassDefinition
    /// The full pass.json, every value tagged with the line that produced it.
    package var source: SourceNode
    /// Images and localization files: the template's, with the pass's own images replacing them by name.
    package var files: [PackageFile]
    package var download: DownloadPolicy

    package var passTypeIdentifier: String? { source["passTypeIdentifier"]?.stringValue }
    package var serialNumber: String { definition.serialNumber }

    /// Maps PassModel diagnostics (key paths into pass.json) to the lines an
    /// editor has to change.
    package func locate(_ diagnostics: [Diagnostic]) -> [ContentDiagnostic] {
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
