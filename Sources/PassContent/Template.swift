import Foundation
import PassModel

/// `templates/<name>/` (or a Pass Designer `.pkpasstemplate` bundle): a
/// partial pass.json with placeholders, and its files.
package struct Template: Sendable {
    package var name: String
    package var directory: String
    /// The template's pass.json, with passforge's own keys (`download`) taken out.
    package var passJSON: SourceNode
    /// The placeholders the template uses, parsed once.
    package var placeholders: PlaceholderTemplate
    package var download: DownloadPolicy?
    /// Images and localization files, sorted by name.
    package var files: [PackageFile]
    /// Every byte the template is made of, for fingerprinting; pass.json first.
    package var passJSONBytes: [UInt8]
    /// Things worth knowing that do not stop the build (ignored files).
    package var warnings: [ContentDiagnostic] = []
    /// Every `<lang>.lproj/pass.strings`, parsed.
    package var localizations: [LocalizedStrings] = []
    /// Every `<lang>.lproj` folder's language, sorted.
    package var languages: [String] = []
    /// Whether the template is a `.pkpasstemplate` bundle saved by Pass Designer.
    package var isDesignerBundle: Bool { directory.hasSuffix(TemplateLoader.designerExtension) }

    package var passJSONPath: String { (directory as NSString).appendingPathComponent("pass.json") }
}
