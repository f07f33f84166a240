import Foundation
import PassModel

/// Reads templates from the templates directory, once each.
package struct TemplateLoader: Sendable {
    package var directory: String

    package init(directory: String) { self.directory = directory }

    /// Names of the template folders, sorted.
    package func templateNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasPrefix(".") && isDirectory((directory as NSString).appendingPathComponent($0)) }.sorted()
    }

    package func load(_ name: String) -> Result<Template, ContentErrors> {
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
            placeholders = PlaceholderTemplate(root: root)
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

func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}
