import Foundation
import PassModel

/// Renders definitions: config defaults, then the template with placeholders
/// filled, then `serialNumber`, then the `pass:` override (deep merge).
package struct PassRenderer: Sendable {
    package var configuration: ProjectConfiguration
    /// Where a pass's own images may be, links followed: the templates and content folders.
    package var boundary: ProjectBoundary

    package init(configuration: ProjectConfiguration, boundary: ProjectBoundary) {
        self.configuration = configuration
        self.boundary = boundary
    }

    package func render(_ definition: PassDefinition, template: Template) -> Result<RenderedPass, ContentErrors> {
        var problems: [ContentDiagnostic] = []
        let serialNode = SourceNode.scalar(.string(definition.serialNumber), at: definition.serialLocation)
        let renderer = PlaceholderRenderer(
            data: definition.data, builtins: ["serialNumber": serialNode],
            definitionLocation: definition.data.members?.isEmpty == false ? definition.data.location : definition.location,
            serialNumber: definition.serialNumber)

        // formatVersion is always 1 (Apple knows no other); a template may still state it.
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
            let bytes: [UInt8]
            switch boundary.read(image.path) {
            case .success(let read): bytes = read
            case .failure(.unreadable), .failure(.unsafeName):
                problems.append(.error(at: image.location, keyPath: ["images", .key(image.name)], rule: "content.image-missing",
                                       "pass \(definition.serialNumber): image file \(image.path) does not exist; fix the path (it is relative to \(definition.file))"))
                continue
            case .failure(.outside):
                // Neither read nor described (no size, no bytes): the message is the same for any file out there.
                problems.append(.error(at: image.location, keyPath: ["images", .key(image.name)], rule: "content.image-outside-project",
                                       "pass \(definition.serialNumber): image file \(image.path) is outside \(boundary.folderList) (by a `../` path or a symbolic link); a signed pass holds only files of the project, so copy the image into \(boundary.folders.last ?? "the content folder") and give its path relative to \(definition.file)"))
                continue
            }
            files.removeAll { $0.name == image.name }
            files.append(PackageFile(name: image.name, bytes: bytes, source: image.path))
        }
        // pass.strings values with placeholders, filled from this pass's data. The file's source is the
        // content file: it is this pass's own, never the template's shared copy.
        for strings in template.localizations where strings.hasPlaceholders {
            let bytes = strings.rendered(with: renderer, problems: &problems)
            files.removeAll { $0.name == strings.fileName }
            files.append(PackageFile(name: strings.fileName, bytes: bytes, source: definition.file))
        }
        files.sort { $0.name < $1.name }
        if problems.contains(where: \.isError) { return .failure(ContentErrors(problems)) }
        return .success(RenderedPass(definition: definition, source: pass, files: files,
                                     download: definition.download ?? template.download ?? .private))
    }
}
