/// The parts of an image's path in a pass: `en.lproj/logo@2x.png` is the
/// logo at scale 2, localized for `en`.
package struct PassImageName: Sendable, Hashable {
    /// The path as given.
    package var path: String
    /// The language folder without `.lproj` (`en`, `pt-BR`), or nil at the top level.
    package var localization: String?
    /// The name before the scale suffix: `logo`.
    package var baseName: String
    /// The image kind, or nil when `baseName` is not one Wallet knows.
    package var kind: PassImageKind?
    /// 1, 2 or 3 (no suffix, `@2x`, `@3x`).
    package var scale: Int

    /// Parses `path`; nil when it is not `[LANG.lproj/]NAME[@2x|@3x].png`.
    package init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var file: Substring
        switch parts.count {
        case 1:
            file = parts[0]
        case 2:
            guard parts[0].hasSuffix(".lproj"), parts[0].count > ".lproj".count else { return nil }
            localization = String(parts[0].dropLast(".lproj".count))
            file = parts[1]
        default:
            return nil
        }
        // Devices look files up by exact name, so "Logo.PNG" is not found.
        guard file.hasSuffix(".png") else { return nil }
        file = file.dropLast(4)
        scale = 1
        if file.hasSuffix("@2x") {
            scale = 2
            file = file.dropLast(3)
        } else if file.hasSuffix("@3x") {
            scale = 3
            file = file.dropLast(3)
        }
        guard !file.isEmpty, !file.contains("@") else { return nil }
        self.path = path
        baseName = String(file)
        kind = PassImageKind(rawValue: baseName)
    }

    /// The name without the localization folder: `logo@2x.png`.
    package var fileName: String { path.split(separator: "/").last.map(String.init) ?? path }
}
