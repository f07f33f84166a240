import Foundation
import PassModel

/// Renders definitions: config defaults, then the template with placeholders
/// filled, then `serialNumber`, then the `pass:` override (deep merge).
///
/// Orders render the same way from an order template: passforge.yml's order
/// defaults (`orderTypeIdentifier`, `webServiceURL`), `schemaVersion` 1, the
/// template's order.json, `orderIdentifier`, then the `order:` override.
/// `updatedAt` is left to the build (`RenderedPass.withUpdatedAt(_:)`), and
/// `RenderedPass.orderDiagnostics(options:)` runs the order rules at file:line.
package struct PassRenderer: Sendable {
    package var configuration: ProjectConfiguration
    /// Where a pass's own images may be, links followed: the templates and content folders.
    package var boundary: ProjectBoundary

    package init(configuration: ProjectConfiguration, boundary: ProjectBoundary) {
        self.configuration = configuration
        self.boundary = boundary
    }

    package func render(_ definition: PassDefinition, template: Template) -> Result<RenderedPass, ContentErrors> {
        let kind = template.kind
        guard definition.kind == kind else {
            return .failure(ContentErrors([kindMismatch(definition, template: template)]))
        }
        var problems: [ContentDiagnostic] = []
        let identifierKey = kind.identifierKey
        let serialNode = SourceNode.scalar(.string(definition.serialNumber), at: definition.serialLocation)
        let renderer = PlaceholderRenderer(
            data: definition.data, builtins: [identifierKey: serialNode],
            definitionLocation: definition.data.members?.isEmpty == false
                ? definition.data.location : definition.location,
            serialNumber: definition.serialNumber, noun: kind.noun)

        // formatVersion is always 1 (Apple knows no other), and so is an order's schemaVersion; a template may
        // still state it.
        var pass = SourceNode(.object([]), at: template.passJSON.location)
        pass.set(
            kind == .pass ? "formatVersion" : "schemaVersion", to: .scalar(.int(1), at: template.passJSON.location))
        for member in configuration.defaults(for: kind).members ?? [] { pass.set(member.key, to: member.value) }
        pass.set(identifierKey, to: serialNode)
        pass = pass.merging(renderer.render(template.placeholders, problems: &problems))
        if let override = definition.passOverride {
            pass = pass.merging(renderOverride(override, of: definition, with: renderer, problems: &problems))
        }
        // The serial in the definition is the one that names the file; keep it authoritative.
        pass.set(identifierKey, to: serialNode)
        if kind == .order, let updated = pass.member("updatedAt") {
            // Apple requires updatedAt to increase strictly with each change; only the build, which keeps the
            // update tags, can promise that.
            problems.append(
                .error(
                    at: updated.keyLocation, keyPath: ["updatedAt"], rule: "content.updated-at",
                    "order \(definition.serialNumber): updatedAt is set by the build each time the order "
                        + "changes (Apple requires it to increase strictly); remove it, and set createdAt only"))
        }
        let files = packageFiles(of: definition, template: template, renderer: renderer, problems: &problems)
        if problems.contains(where: \.isError) { return .failure(ContentErrors(problems)) }
        return .success(
            RenderedPass(
                definition: definition, source: pass, files: files,
                download: definition.download ?? template.download ?? .private))
    }

    /// The `pass:` (`order:`) override with its placeholders filled; it may not set the serial (order identifier).
    private func renderOverride(
        _ override: SourceNode, of definition: PassDefinition, with renderer: PlaceholderRenderer,
        problems: inout [ContentDiagnostic]
    ) -> SourceNode {
        let kind = definition.kind
        let identifierKey = kind.identifierKey
        let overrideKey = kind.overrideKey
        var overrideProblems: [ContentDiagnostic] = []
        let rendered: SourceNode
        switch PlaceholderTemplate.parse(override) {
        case .success(let parsed): rendered = renderer.render(parsed, problems: &overrideProblems)
        case .failure(let errors):
            overrideProblems += errors.diagnostics
            rendered = override
        }
        problems += overrideProblems
        if let serial = rendered[identifierKey], serial.stringValue != definition.serialNumber {
            problems.append(
                .error(
                    at: serial.location, keyPath: [.key(overrideKey), .key(identifierKey)],
                    rule: "content.serial-override",
                    "set the \(kind == .pass ? "serial" : "order identifier") with `\(identifierKey):` "
                        + "beside `template:`, not under `\(overrideKey):`"))
        }
        return rendered
    }

    /// The template's files, with the definition's own images and its filled-in strings files in their place.
    private func packageFiles(
        of definition: PassDefinition, template: Template, renderer: PlaceholderRenderer,
        problems: inout [ContentDiagnostic]
    ) -> [PackageFile] {
        var files = template.files
        for image in definition.images {
            guard let bytes = imageBytes(image, of: definition, problems: &problems) else { continue }
            files.removeAll { $0.name == image.name }
            files.append(PackageFile(name: image.name, bytes: bytes, source: image.path))
        }
        // pass.strings (order.strings) values with placeholders, filled from this pass's data. The file's source is the
        // content file: it is this pass's own, never the template's shared copy.
        for strings in template.localizations where strings.hasPlaceholders {
            let bytes = strings.rendered(with: renderer, problems: &problems)
            files.removeAll { $0.name == strings.fileName }
            files.append(PackageFile(name: strings.fileName, bytes: bytes, source: definition.file))
        }
        files.sort { $0.name < $1.name }
        return files
    }

    /// The bytes of one of the definition's own images, read inside the project's folders; nil with the problem.
    private func imageBytes(
        _ image: (name: String, path: String, location: SourceLocation), of definition: PassDefinition,
        problems: inout [ContentDiagnostic]
    ) -> [UInt8]? {
        let noun = definition.kind.noun
        switch boundary.read(image.path) {
        case .success(let read):
            return read
        case .failure(.unreadable), .failure(.unsafeName):
            problems.append(
                .error(
                    at: image.location, keyPath: ["images", .key(image.name)], rule: "content.image-missing",
                    "\(noun) \(definition.serialNumber): image file \(image.path) does not exist; fix the "
                        + "path (it is relative to \(definition.file))"))
            return nil
        case .failure(.outside):
            // Neither read nor described (no size, no bytes): the message is the same for any file out there.
            problems.append(
                .error(
                    at: image.location, keyPath: ["images", .key(image.name)],
                    rule: "content.image-outside-project",
                    "\(noun) \(definition.serialNumber): image file \(image.path) is outside "
                        + "\(boundary.folderList) (by a `../` path or a symbolic link); a signed \(noun) holds "
                        + "only files of the project, so copy the image into "
                        + "\(boundary.folders.last ?? "the content folder") and give its path relative to "
                        + "\(definition.file)"))
            return nil
        }
    }

    /// An entry whose keys say pass (order) naming an order (pass) template: an error at its identifier's line.
    private func kindMismatch(_ definition: PassDefinition, template: Template) -> ContentDiagnostic {
        let fix =
            template.kind == .order
            ? "an order is named with `orderIdentifier:` (not `serialNumber:`) and overridden with `order:` "
                + "(not `pass:`); a list of orders is `orders:`. Rename the keys, or name a pass template"
            : "a pass is named with `serialNumber:` (not `orderIdentifier:`) and overridden with `pass:` (not "
                + "`order:`); a list of passes is `passes:`. Rename the keys, or name an order template"
        return .error(
            at: definition.serialLocation, keyPath: [.key(definition.kind.identifierKey)],
            rule: "content.template-kind",
            "template `\(template.name)` is \(template.kind == .order ? "an order" : "a pass") "
                + "template (it holds \(template.kind.rootFile)), but this entry defines "
                + "\(definition.kind == .order ? "an order" : "a pass"); \(fix)",
            notes: [(SourceLocation(file: template.passJSONPath), "the template's \(template.kind.rootFile)")])
    }
}
