import Foundation
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

/// Renders definitions: config defaults, then the template with placeholders
/// filled, then `serialNumber`, then the `pass:` override (deep merge).
public struct PassRenderer: Sendable {
    public var configuration: ProjectConfiguration

    public init(configuration: ProjectConfiguration) { self.configuration = configuration }

    public func render(_ definition: PassDefinition, template: Template) -> Result<RenderedPass, ContentErrors> {
        var problems: [ContentDiagnostic] = []
        let serialNode = SourceNode.scalar(.string(definition.serialNumber), at: definition.serialLocation)
        let renderer = PlaceholderRenderer(
            data: definition.data, builtins: ["serialNumber": serialNode],
            definitionLocation: definition.data.members?.isEmpty == false ? definition.data.location : definition.location,
            serialNumber: definition.serialNumber)

        // formatVersion is always 1 (pass-format-notes.md); a template may still state it.
        var pass = SourceNode(.object([]), at: template.passJSON.location)
        pass.set("formatVersion", to: .scalar(.int(1), at: template.passJSON.location))
        for member in configuration.passDefaults.members ?? [] { pass.set(member.key, to: member.value) }
        pass.set("serialNumber", to: serialNode)
        pass = pass.merging(renderer.render(template.placeholders, problems: &problems))
        if let override = definition.passOverride {
            var overrideProblems: [ContentDiagnostic] = []
            let rendered: SourceNode
            switch PlaceholderTemplate.parse(override) {
            case .success(let parsed): rendered = renderer.render(parsed, problems: &overrideProblems)
            case .failure(let errors): overrideProblems += errors.diagnostics; rendered = override
            }
            problems += overrideProblems
            if let serial = rendered["serialNumber"], serial.stringValue != definition.serialNumber {
                problems.append(.error(at: serial.location, keyPath: ["pass", "serialNumber"], rule: "content.serial-override",
                                       "set the serial with `serialNumber:` beside `template:`, not under `pass:`"))
            }
            pass = pass.merging(rendered)
        }
        // The serial in the definition is the one that names the file; keep it authoritative.
        pass.set("serialNumber", to: serialNode)

        var files = template.files
        for image in definition.images {
            guard let bytes = FileManager.default.contents(atPath: image.path) else {
                problems.append(.error(at: image.location, keyPath: ["images", .key(image.name)], rule: "content.image-missing",
                                       "pass \(definition.serialNumber): image file \(image.path) does not exist; fix the path (it is relative to \(definition.file))"))
                continue
            }
            files.removeAll { $0.name == image.name }
            files.append(PackageFile(name: image.name, bytes: Array(bytes), source: image.path))
        }
        files.sort { $0.name < $1.name }
        if problems.contains(where: \.isError) { return .failure(ContentErrors(problems)) }
        return .success(RenderedPass(definition: definition, source: pass, files: files,
                                     download: definition.download ?? template.download ?? .private))
    }
}
