import AtomicFiles
import Foundation
import PassModel

/// Reads templates from the templates directory, once each.
///
/// A template is a folder `templates/<name>/`, or a `.pkpasstemplate` bundle
/// as Apple's Pass Designer saves it (`templates/<name>.pkpasstemplate/`),
/// which content files name with or without the extension.
package struct TemplateLoader: Sendable {
    package var directory: String
    /// Where the files of a template may be, links followed: by default the templates folder.
    package var boundary: ProjectBoundary

    package init(directory: String, boundary: ProjectBoundary? = nil) {
        self.directory = directory
        self.boundary = boundary ?? ProjectBoundary(folders: [directory])
    }

    package static let designerExtension = ".pkpasstemplate"

    /// Names of the template folders, sorted (bundles with their extension).
    package func templateNames() -> [String] {
        let names = AtomicFileSystem.directoryEntries(directory)?.map(\.name) ?? []
        return names.filter { !$0.hasPrefix(".") && isDirectory((directory as NSString).appendingPathComponent($0)) }
            .sorted()
    }

    /// The folder of template `name`: `templates/<name>/`, else the bundle
    /// `templates/<name>.pkpasstemplate/`.
    func folder(of name: String) -> Result<String, ContentErrors> {
        let plain = (directory as NSString).appendingPathComponent(name)
        let bundle = plain + Self.designerExtension
        let plainExists = isDirectory(plain)
        let bundleExists =
            !name.isEmpty && !name.contains("/") && !name.hasSuffix(Self.designerExtension) && isDirectory(bundle)
        switch (plainExists, bundleExists) {
        case (true, false): return .success(plain)
        case (false, true): return .success(bundle)
        case (true, true):
            return .failure(
                ContentErrors([
                    .error(
                        at: SourceLocation(file: bundle), rule: "template.ambiguous",
                        "two templates are named \(name): \(plain)/ and \(bundle)/; rename or remove one of them")
                ]))
        case (false, false):
            return .failure(
                ContentErrors([
                    .error(
                        at: SourceLocation(file: plain), rule: "template.missing",
                        "template folder \(plain) does not exist")
                ]))
        }
    }

    package func load(_ name: String) -> Result<Template, ContentErrors> {
        let folder: String
        switch self.folder(of: name) {
        case .success(let found): folder = found
        case .failure(let errors): return .failure(errors)
        }
        let isDesignerBundle = folder.hasSuffix(Self.designerExtension)
        if case .failure(.outside) = boundary.containedPath(folder) {
            return .failure(ContentErrors([outsideError(folder, what: "template folder \(name)")]))
        }
        let kind: WalletItemKind
        switch templateKind(of: folder, name: name, isDesignerBundle: isDesignerBundle) {
        case .success(let found): kind = found
        case .failure(let errors): return .failure(errors)
        }
        let passPath = (folder as NSString).appendingPathComponent(kind.rootFile)
        let passData: [UInt8]
        switch boundary.read(passPath) {
        case .success(let bytes): passData = bytes
        case .failure(.outside):
            return .failure(ContentErrors([outsideError(passPath, what: "\(kind.rootFile) of template \(name)")]))
        case .failure(.unreadable), .failure(.unsafeName):
            return .failure(
                ContentErrors([
                    .error(
                        at: SourceLocation(file: passPath), rule: "template.pass-json",
                        "template \(name) has no pass.json; add one with the pass style and "
                            + "fields (or order.json for an order template)")
                ]))
        }
        var problems: [ContentDiagnostic] = []
        var root: SourceNode
        do { root = try JSONSourceParser.parse(Array(passData), file: passPath) } catch {
            return .failure(ContentErrors([error]))
        }
        guard root.members != nil else {
            return .failure(
                ContentErrors([
                    .error(at: root.location, rule: "template.pass-json", "\(kind.rootFile) must be a JSON object")
                ]))
        }
        if isDesignerBundle { root = DesignerTemplate.normalized(root) }
        var download: DownloadPolicy?
        if let node = root.remove("download") {
            download = parseDownload(node, problems: &problems)
        }
        let placeholders: PlaceholderTemplate
        switch PlaceholderTemplate.parse(root) {
        case .success(let parsed): placeholders = parsed
        case .failure(let errors):
            problems += errors.diagnostics
            placeholders = PlaceholderTemplate(root: root)
        }
        var localizations: [LocalizedStrings] = []
        var languages: [String] = []
        let files = packageFiles(
            in: folder, kind: kind, isDesignerBundle: isDesignerBundle, localizations: &localizations,
            languages: &languages, problems: &problems)
        problems += TemplateLocalization.missingTranslations(
            in: root, kind: kind, localizations: localizations, languages: languages)
        if problems.contains(where: \.isError) { return .failure(ContentErrors(problems)) }
        return .success(
            Template(
                name: name, directory: folder, passJSON: root, placeholders: placeholders,
                download: download, files: files, passJSONBytes: Array(passData), warnings: problems,
                localizations: localizations, languages: languages, kind: kind))
    }

    /// A folder with pass.json is a pass template, one with order.json an order template; both at once is
    /// an error, since one package holds one root file (Apple: "Creating the source for an order").
    /// A Pass Designer bundle is always a pass template.
    private func templateKind(of folder: String, name: String, isDesignerBundle: Bool) -> Result<
        WalletItemKind, ContentErrors
    > {
        guard !isDesignerBundle else { return .success(.pass) }
        let orderPath = (folder as NSString).appendingPathComponent(WalletItemKind.order.rootFile)
        guard AtomicFileSystem.exists(orderPath) else { return .success(.pass) }
        let passPath = (folder as NSString).appendingPathComponent(WalletItemKind.pass.rootFile)
        if AtomicFileSystem.exists(passPath) {
            return .failure(
                ContentErrors([
                    .error(
                        at: SourceLocation(file: folder), rule: "template.kind",
                        "template \(name) holds both pass.json and order.json; a template makes either "
                            + "passes (pass.json) or orders (order.json), so move order.json into a template "
                            + "folder of its own, e.g. templates/\(name)-order/")
                ]))
        }
        return .success(.order)
    }

    /// Images at the top level and in `<lang>.lproj/` folders, and `pass.strings` or `order.strings` (parsed, so
    /// that a syntax error is reported at its line). An order's images may be PNG or JPEG (Apple, "Creating the
    /// source for an order"); a pass's are PNG.
    private func packageFiles(
        in folder: String, kind: WalletItemKind, isDesignerBundle: Bool, localizations: inout [LocalizedStrings],
        languages: inout [String], problems: inout [ContentDiagnostic]
    ) -> [PackageFile] {
        var files: [PackageFile] = []
        let entries = (AtomicFileSystem.directoryEntries(folder)?.map(\.name) ?? []).sorted()
        func isImage(_ file: String) -> Bool {
            let lowered = file.lowercased()
            return lowered.hasSuffix(".png")
                || (kind == .order && (lowered.hasSuffix(".jpg") || lowered.hasSuffix(".jpeg")))
        }
        let imageFormats = kind == .order ? "PNG or JPEG images" : "PNG images"
        for entry in entries where !entry.hasPrefix(".") && entry != kind.rootFile {
            let path = (folder as NSString).appendingPathComponent(entry)
            if isDesignerBundle {
                let handling = DesignerTemplate.handling(of: entry, at: path)
                problems += handling.problems
                if handling.skip { continue }
            }
            if isDirectory(path) {
                guard entry.hasSuffix(".lproj"), entry.count > ".lproj".count else {
                    problems.append(
                        .warning(
                            at: SourceLocation(file: path), rule: "template.ignored-file",
                            "folder \(entry) is ignored; only <lang>.lproj folders go into a \(kind.noun)"))
                    continue
                }
                languages.append(String(entry.dropLast(".lproj".count)))
                let inner = (AtomicFileSystem.directoryEntries(path)?.map(\.name) ?? []).sorted()
                for file in inner where !file.hasPrefix(".") {
                    let filePath = (path as NSString).appendingPathComponent(file)
                    guard file == kind.stringsFile || isImage(file) else {
                        problems.append(
                            .warning(
                                at: SourceLocation(file: filePath), rule: "template.ignored-file",
                                "\(entry)/\(file) is ignored; an .lproj folder holds "
                                    + "\(kind.stringsFile) and \(imageFormats)"))
                        continue
                    }
                    let bytes: [UInt8]
                    switch boundary.read(filePath) {
                    case .success(let read): bytes = read
                    case .failure(.outside):
                        problems.append(outsideError(filePath, what: "\(entry)/\(file)"))
                        continue
                    case .failure(.unreadable), .failure(.unsafeName): continue
                    }
                    if file == kind.stringsFile {
                        switch LocalizedStrings.parse(
                            Array(bytes), language: String(entry.dropLast(".lproj".count)), path: filePath,
                            fileName: kind.stringsFile)
                        {
                        case .success(let strings): localizations.append(strings)
                        case .failure(let errors): problems += errors.diagnostics
                        }
                    }
                    files.append(PackageFile(name: "\(entry)/\(file)", bytes: bytes, source: filePath))
                }
            } else if isImage(entry) || (kind == .order && entry.lowercased().hasSuffix(".pdf")) {
                // An order may also hold a receipt or a return label as a PDF (Apple: PaymentTransaction.receipt,
                // Return.returnLabel name a file in the package).
                switch boundary.read(path) {
                case .success(let bytes): files.append(PackageFile(name: entry, bytes: bytes, source: path))
                case .failure(.outside): problems.append(outsideError(path, what: entry))
                case .failure(.unreadable), .failure(.unsafeName): break
                }
            } else {
                problems.append(
                    .warning(
                        at: SourceLocation(file: path), rule: "template.ignored-file",
                        "\(entry) is ignored; a template holds \(kind.rootFile), "
                            + "\(imageFormats)\(kind == .order ? ", PDF receipts and return labels" : "") and "
                            + "<lang>.lproj folders"))
            }
        }
        return files
    }
}

extension TemplateLoader {
    /// A template file that is a link to a file outside the project: its bytes are not read, so that
    /// neither the pass nor this message carries any of them.
    func outsideError(_ path: String, what: String) -> ContentDiagnostic {
        .error(
            at: SourceLocation(file: path), rule: "template.outside-project",
            "\(what) is a symbolic link to a file outside \(boundary.folderList); a signed pass holds "
                + "only files of the project, so replace the link with a copy of the file")
    }
}

/// Whether `path` is a folder or a link to one.
func isDirectory(_ path: String) -> Bool {
    AtomicFileSystem.isDirectory(path)
}
