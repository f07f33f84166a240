import Foundation
package import PassModel

/// `templates/<name>/` (or a Pass Designer `.pkpasstemplate` bundle): a
/// partial pass.json (or order.json) with placeholders, and its files.
///
/// A folder with `order.json` is an order template (`kind == .order`); its
/// root file is order.json, its strings files `<lang>.lproj/order.strings`,
/// and its images PNG or JPEG (a merchant logo, line-item images named by
/// `image`). The `passJSON…` names hold the root file of either kind.
package struct Template: Sendable {
    package var name: String
    package var directory: String
    /// The template's root file (pass.json, or order.json for an order template), with passforge's own keys
    /// (`download`) taken out.
    package var passJSON: SourceNode
    /// The placeholders the template uses, parsed once.
    package var placeholders: PlaceholderTemplate
    package var download: DownloadPolicy?
    /// Images and localization files, sorted by name.
    package var files: [PackageFile]
    /// Every byte of the root file (pass.json or order.json), for fingerprinting.
    package var passJSONBytes: [UInt8]
    /// Things worth knowing that do not stop the build (ignored files).
    package var warnings: [ContentDiagnostic] = []
    /// Every `<lang>.lproj/pass.strings` (`order.strings` for an order template), parsed.
    package var localizations: [LocalizedStrings] = []
    /// Every `<lang>.lproj` folder's language, sorted.
    package var languages: [String] = []
    /// Whether the template is a `.pkpasstemplate` bundle saved by Pass Designer.
    package var isDesignerBundle: Bool { directory.hasSuffix(TemplateLoader.designerExtension) }

    /// A pass or an order template: which root file the folder holds.
    package var kind: WalletItemKind = .pass

    /// The root file on disk: `…/pass.json` or `…/order.json`.
    package var passJSONPath: String { (directory as NSString).appendingPathComponent(kind.rootFile) }
}
