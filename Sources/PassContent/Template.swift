import Foundation
import PassModel

/// Whether a pass also gets a public download URL (DESIGN.md "Downloads").
public enum DownloadPolicy: String, Sendable, Hashable {
    /// Only the unguessable capability URL.
    case `private`
    /// Also `download/<passTypeIdentifier>/<serialNumber>.pkpass`, for coupons meant for everyone.
    case `public`
}

/// A file that goes into every pass made from a template: an image or a
/// `<lang>.lproj/pass.strings`.
public struct PackageFile: Sendable, Hashable {
    /// Path inside the .pkpass, e.g. `icon@2x.png` or `de.lproj/pass.strings`.
    public var name: String
    public var bytes: [UInt8]
    /// Where it came from, for messages.
    public var source: String

    public init(name: String, bytes: [UInt8], source: String) {
        self.name = name
        self.bytes = bytes
        self.source = source
    }
}

/// `templates/<name>/`: a partial pass.json with placeholders, and its files.
public struct Template: Sendable {
    public var name: String
    public var directory: String
    /// The template's pass.json, with passforge's own keys (`download`) taken out.
    public var passJSON: SourceNode
    /// The placeholders the template uses, parsed once.
    public var placeholders: PlaceholderTemplate
    public var download: DownloadPolicy?
    /// Images and localization files, sorted by name.
    public var files: [PackageFile]
    /// Every byte the template is made of, for fingerprinting; pass.json first.
    public var passJSONBytes: [UInt8]
    /// Things worth knowing that do not stop the build (ignored files).
    public var warnings: [ContentDiagnostic] = []

    public var passJSONPath: String { (directory as NSString).appendingPathComponent("pass.json") }
}

/// Reads templates from the templates directory, once each.
public struct TemplateLoader: Sendable {
    public var directory: String

    public init(directory: String) { self.directory = directory }

    /// Names of the template folders, sorted.
    public func templateNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasPrefix(".") && isDirectory((directory as NSString).appendingPathComponent($0)) }.sorted()
    }

    public func load(_ name: String) -> Result<Template, ContentErrors> {
        let folder = (directory as NSString).appendingPathComponent(name)
        let passPath = (folder as NSString).appendingPathComponent("pass.json")
        guard isDirectory(folder) else {
            return .failure(ContentErrors([.error(at: SourceLocation(file: folder), rule: "template.missing",
                                                  "template folder \(folder) does not exist")]))
        }
        guard let passData = FileManager.default.contents(atPath: passPath) else {
            return .failure(ContentErrors([.error(at: SourceLocation(file: passPath), rule: "template.pass-json",
                                                  "template \(name) has no pass.json; add one with the pass style and fields")]))
        }
        var problems: [ContentDiagnostic] = []
        var root: SourceNode
        do { root = try JSONSourceParser.parse(Array(passData), file: passPath) } catch {
            return .failure(ContentErrors([error]))
        }
        guard root.members != nil else {
            return .failure(ContentErrors([.error(at: root.location, rule: "template.pass-json", "pass.json must be a JSON object")]))
        }
        var download: DownloadPolicy?
        if let node = root.remove("download") {
            download = parseDownload(node, problems: &problems)
        }
        let placeholders: PlaceholderTemplate
        switch PlaceholderTemplate.parse(root) {
        case .success(let parsed): placeholders = parsed
        case .failure(let errors):
            problems += errors.diagnostics
            placeholders = PlaceholderTemplate(root: root, hasPlaceholders: false)
        }
        let files = packageFiles(in: folder, problems: &problems)
        if problems.contains(where: \.isError) { return .failure(ContentErrors(problems)) }
        return .success(Template(name: name, directory: folder, passJSON: root, placeholders: placeholders,
                                 download: download, files: files, passJSONBytes: Array(passData), warnings: problems))
    }

    /// Images at the top level and in `<lang>.lproj/` folders, and `pass.strings`.
    private func packageFiles(in folder: String, problems: inout [ContentDiagnostic]) -> [PackageFile] {
        var files: [PackageFile] = []
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        for entry in entries where !entry.hasPrefix(".") && entry != "pass.json" {
            let path = (folder as NSString).appendingPathComponent(entry)
            if isDirectory(path) {
                guard entry.hasSuffix(".lproj") else {
                    problems.append(.warning(at: SourceLocation(file: path), rule: "template.ignored-file",
                                             "folder \(entry) is ignored; only <lang>.lproj folders go into a pass"))
                    continue
                }
                let inner = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
                for file in inner where !file.hasPrefix(".") {
                    let filePath = (path as NSString).appendingPathComponent(file)
                    guard file == "pass.strings" || file.hasSuffix(".png") else {
                        problems.append(.warning(at: SourceLocation(file: filePath), rule: "template.ignored-file",
                                                 "\(entry)/\(file) is ignored; an .lproj folder holds pass.strings and PNG images"))
                        continue
                    }
                    if let bytes = FileManager.default.contents(atPath: filePath) {
                        files.append(PackageFile(name: "\(entry)/\(file)", bytes: Array(bytes), source: filePath))
                    }
                }
            } else if entry.lowercased().hasSuffix(".png") {
                if let bytes = FileManager.default.contents(atPath: path) {
                    files.append(PackageFile(name: entry, bytes: Array(bytes), source: path))
                }
            } else {
                problems.append(.warning(at: SourceLocation(file: path), rule: "template.ignored-file",
                                         "\(entry) is ignored; a template holds pass.json, PNG images and <lang>.lproj folders"))
            }
        }
        return files
    }
}

func parseDownload(_ node: SourceNode, problems: inout [ContentDiagnostic]) -> DownloadPolicy? {
    guard let text = node.stringValue, let policy = DownloadPolicy(rawValue: text) else {
        problems.append(.error(at: node.location, keyPath: ["download"], rule: "content.download",
                               "download must be `public` or `private`"))
        return nil
    }
    return policy
}

func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}
