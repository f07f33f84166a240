import Foundation
import PassModel

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
