/// Apple's rules for the images of a pass (PassKit Package Format Reference;
/// the Wallet section of the Human Interface Guidelines): which images each style
/// shows, their sizes, and that an image is not both at the top level and in
/// an `.lproj` folder.
///
/// Give it every image of one pass, keyed by its path inside the package
/// (`icon.png`, `strip@2x.png`, `de.lproj/logo@3x.png`):
///
///     let diagnostics = ImageRules.validate(files: ["icon.png": bytes, …], style: .eventTicket)
///
/// or, when the headers are already read, ``validate(images:style:)`` with
/// `nil` for a file that is not a PNG. Each diagnostic's key path is the
/// image's path as one key (`JSONPath([.key("strip@2x.png")])`).
///
/// | rule | severity | when |
/// |---|---|---|
/// | `image.name` | error | the path is not `[LANG.lproj/]NAME[@2x\|@3x].png` |
/// | `image.notPNG` | error | the bytes are not a PNG |
/// | `image.notAllowed` | error | the style does not show that image, or no style does |
/// | `image.iconMissing` | error | no `icon.png` (top level, or in every `.lproj`) |
/// | `image.iconScale` | warning | `icon@2x.png` or `icon@3x.png` is missing beside an `icon.png` |
/// | `image.posterArtwork` | error | a poster event ticket has no `artwork` and no `background` image |
/// | `image.posterOnly` | warning | an event ticket that is not a poster has `artwork`, `primaryLogo` or `secondaryLogo` |
/// | `image.size` | warning | the pixels differ from the expected points × scale (logo: larger than 160×50 × scale) |
/// | `image.stripCombination` | error | an event ticket has a strip and a background or thumbnail |
/// | `image.localizedDuplicate` | error | an image is both at the top level and in an `.lproj` |
/// | `image.dimensions` | error | a side is longer than ``ImageLimits/maximumPixelSide`` pixels (read from the PNG header, not decoded) |
/// | `image.fileSize` | error | the file is larger than ``ImageLimits/maximumFileSize`` bytes |
package enum ImageRules {
    /// Checks image files given as bytes. Files that are not images
    /// (`pass.json`, `manifest.json`, `signature`, `*.strings`) are skipped.
    ///
    /// Without the pass.json, the poster rules are not applied: an event
    /// ticket may carry the poster images, and none is required.
    package static func validate(files: [String: [UInt8]], style: PassStyle) -> [Diagnostic] {
        check(headers(of: files), fileSizes: files.mapValues(\.count), style: style, scheme: .unknown)
    }

    /// Checks the images of `pass` (a pass.json tree), with the rules of
    /// its `preferredStyleSchemes`: a poster event ticket needs artwork or a
    /// background. Empty when the pass has no single style (the validator
    /// reports that).
    package static func validate(files: [String: [UInt8]], pass: JSONValue) -> [Diagnostic] {
        let styles = PassStyle.allCases.filter { pass[$0.key] != nil }
        guard styles.count == 1 else { return [] }
        return check(
            headers(of: files), fileSizes: files.mapValues(\.count), style: styles[0],
            scheme: .known(PassStyleScheme.active(in: pass)))
    }

    /// Whether the caller knows the pass's scheme (see ``PassStyleScheme/active(in:)``).
    enum SchemeKnowledge {
        case unknown
        case known(PassStyleScheme?)
    }

    static func headers(of files: [String: [UInt8]]) -> [String: Result<PNGImageInfo, PNGImageInfo.ParseError>] {
        var headers: [String: Result<PNGImageInfo, PNGImageInfo.ParseError>] = [:]
        for (path, bytes) in files where !isNonImageFile(path) {
            do {
                headers[path] = .success(try PNGImageInfo(bytes: bytes))
            } catch {
                headers[path] = .failure(error)
            }
        }
        return headers
    }

    /// Checks images whose headers have been read; `nil` marks a file that is not a PNG.
    package static func validate(images: [String: PNGImageInfo?], style: PassStyle) -> [Diagnostic] {
        check(
            images.mapValues { $0.map { .success($0) } ?? .failure(.notPNGSignature) }, style: style, scheme: .unknown)
    }

    static func isNonImageFile(_ path: String) -> Bool {
        ["pass.json", "manifest.json", "signature"].contains(path) || path.hasSuffix(".strings")
    }

    static func check(
        _ images: [String: Result<PNGImageInfo, PNGImageInfo.ParseError>], fileSizes: [String: Int] = [:],
        style: PassStyle,
        scheme: SchemeKnowledge
    ) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        var names: [PassImageName] = []
        for path in images.keys.sorted() {
            if let name = checkImage(
                at: path, image: images[path]!, fileSize: fileSizes[path], style: style,
                diagnostics: &diagnostics)
            {
                names.append(name)
            }
        }
        diagnostics += checkIcon(names)
        diagnostics += checkIconScales(names)
        diagnostics += checkStripCombination(names, style: style)
        diagnostics += checkLocalizedDuplicates(names)
        if case .known(let active) = scheme {
            diagnostics += checkPosterImages(names, style: style, scheme: active)
        }
        return diagnostics
    }

    /// The rules of one image: its name, whether the style shows it, its file size, and its PNG's pixels.
    /// Returns the image's name when it is a pass image name, for the rules across images.
    private static func checkImage(
        at path: String, image: Result<PNGImageInfo, PNGImageInfo.ParseError>, fileSize: Int?, style: PassStyle,
        diagnostics: inout [Diagnostic]
    ) -> PassImageName? {
        let keyPath = JSONPath([.key(path)])
        guard let name = PassImageName(path: path) else {
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.name",
                    "\(path) is not a pass image name; images are NAME.png, NAME@2x.png or NAME@3x.png "
                        + "(lower-case .png), at the top level or in LANG.lproj/, so rename it"
                ))
            return nil
        }
        let allowed = style.allowedImages.map(\.rawValue).joined(separator: ", ")
        guard let kind = name.kind else {
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.notAllowed",
                    "\(path) is not an image Wallet uses; \(style.pluralName) "
                        + "show \(allowed), so rename or remove it"
                ))
            return name
        }
        guard let sizeRule = style.expectedSize(of: kind) else {
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.notAllowed",
                    "\(path): \(style.pluralName) do not show a \(kind.rawValue) image, "
                        + "only \(allowed); remove it or change the pass style"
                ))
            return name
        }
        if let size = fileSize, size > ImageLimits.maximumFileSize {
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.fileSize",
                    "\(path) is \(ImageLimits.megabytes(size)), more than the "
                        + "\(ImageLimits.megabytes(ImageLimits.maximumFileSize)) an image of a pass may have; "
                        + "save it at the size Wallet shows (\(sizeRule.pixelDescription(scale: name.scale)) "
                        + "pixels) with PNG compression"
                ))
            return name
        }
        switch image {
        case .failure(let problem):
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.notPNG",
                    "\(path) is not a PNG: \(problem); save it as PNG (Wallet reads PNG only)"
                ))
        case .success(let info) where max(info.width, info.height) > ImageLimits.maximumPixelSide:
            // An error, not the size warning: a few KB of PNG can declare 50000×50000 pixels, 10 GB to decode on
            // a phone.
            diagnostics.append(
                .error(
                    at: keyPath, rule: "image.dimensions",
                    "\(path) is \(info.size) pixels, more than the \(ImageLimits.maximumPixelSide) pixels "
                        + "a side an image of a pass may have; a \(kind.rawValue) on \(style.pluralName) is "
                        + "\(sizeRule.pixelDescription(scale: name.scale)) pixels at @\(name.scale)x, so "
                        + "resize it"
                ))
        case .success(let info):
            guard !sizeRule.accepts(info.size, scale: name.scale) else { break }
            let scaleText = name.scale == 1 ? "" : " at @\(name.scale)x"
            diagnostics.append(
                .warning(
                    at: keyPath, rule: "image.size",
                    "\(path) is \(info.size) pixels, but a \(kind.rawValue) on "
                        + "\(style.pluralName)\(scaleText) should be "
                        + "\(sizeRule.pixelDescription(scale: name.scale)) pixels (\(sizeRule) × \(name.scale)); "
                        + "resize it so it is not scaled or cropped"
                ))
        }
        return name
    }

    /// Devices pick the icon for their screen: one without `icon@2x.png`
    /// and `icon@3x.png` scales the small icon up (Apple's validator warns).
    static func checkIconScales(_ names: [PassImageName]) -> [Diagnostic] {
        let icons = names.filter { $0.kind == .icon }
        let folders = Set(icons.filter { $0.scale == 1 }.map(\.localization))
        var diagnostics: [Diagnostic] = []
        for folder in folders.sorted(by: { ($0 ?? "") < ($1 ?? "") }) {
            let prefix = folder.map { "\($0).lproj/" } ?? ""
            for scale in [2, 3] where !icons.contains(where: { $0.localization == folder && $0.scale == scale }) {
                diagnostics.append(
                    .warning(
                        at: [.key("\(prefix)icon@\(scale)x.png")], rule: "image.iconScale",
                        "\(prefix)icon@\(scale)x.png is missing; devices with a @\(scale)x screen scale the "
                            + "small icon up and show it blurred, so add it (\(38 * scale)×\(38 * scale) pixels)"
                    ))
            }
        }
        return diagnostics
    }

    /// A poster event ticket shows artwork (or a background) as its poster,
    /// and Apple's validator requires one of them at any scale. The poster
    /// images mean nothing to an event ticket that is not a poster.
    static func checkPosterImages(_ names: [PassImageName], style: PassStyle, scheme: PassStyleScheme?) -> [Diagnostic]
    {
        guard style == .eventTicket else { return [] }
        if scheme == .posterEventTicket {
            guard !names.contains(where: { $0.kind == .artwork || $0.kind == .background }) else { return [] }
            return [
                .error(
                    at: [.key("artwork.png")], rule: "image.posterArtwork",
                    "a poster event ticket (an eventTicket whose preferredStyleSchemes lists "
                        + "posterEventTicket) needs artwork.png (358×448 points) or background.png (345×505 "
                        + "points), the poster Wallet shows; add artwork.png with @2x and @3x, or remove "
                        + "posterEventTicket from preferredStyleSchemes"
                )
            ]
        }
        return names.filter { $0.kind?.isPosterOnly == true }.map { name in
            .warning(
                at: [.key(name.path)], rule: "image.posterOnly",
                "\(name.path) shows only on poster event tickets, and this event ticket does not "
                    + "prefer posterEventTicket; add \"preferredStyleSchemes\": [\"posterEventTicket\", "
                    + "\"eventTicket\"] to pass.json, or remove the image"
            )
        }
    }

    /// `icon.png` is required (it shows in notifications and on the lock
    /// screen). A localized icon must not also be at the top level, so an
    /// icon in every `.lproj` folder counts too.
    static func checkIcon(_ names: [PassImageName]) -> [Diagnostic] {
        let icons = names.filter { $0.kind == .icon && $0.scale == 1 }
        if icons.contains(where: { $0.localization == nil }) { return [] }
        let localizations = Set(names.compactMap(\.localization))
        let localizedIcons = Set(icons.compactMap(\.localization))
        if !localizations.isEmpty, localizedIcons == localizations { return [] }
        var message =
            "icon.png is missing; every pass needs a 38×38 (or 29×29) point "
            + "icon.png, which Wallet shows in notifications, so add it"
        if names.contains(where: { $0.kind == .icon }) {
            message +=
                " (icon@2x.png and icon@3x.png do not replace icon.png; a "
                + "localized icon must exist in every .lproj folder)"
        }
        return [.error(at: [.key("icon.png")], rule: "image.iconMissing", message)]
    }

    /// An event ticket lays out either a strip or a background with a
    /// thumbnail; with both, the device rejects or misdraws the pass.
    static func checkStripCombination(_ names: [PassImageName], style: PassStyle) -> [Diagnostic] {
        guard style == .eventTicket, let strip = names.first(where: { $0.kind == .strip }) else { return [] }
        guard let other = names.first(where: { $0.kind == .background || $0.kind == .thumbnail }) else { return [] }
        return [
            .error(
                at: [.key(other.path)], rule: "image.stripCombination",
                "an event ticket with a strip image (\(strip.path)) must not have a background or thumbnail "
                    + "image (\(other.path)); keep either the strip or the background and thumbnail"
            )
        ]
    }

    /// An image is either localized or not: with both, which one a device
    /// shows is undefined.
    static func checkLocalizedDuplicates(_ names: [PassImageName]) -> [Diagnostic] {
        let topLevel = Set(names.filter { $0.localization == nil }.map(\.baseName))
        return names.filter { $0.localization != nil && topLevel.contains($0.baseName) }.map { name in
            .error(
                at: [.key(name.path)], rule: "image.localizedDuplicate",
                "\(name.path) is localized, but there is also a top-level \(name.baseName) image; an image "
                    + "must not be both top-level and inside an .lproj, so remove one of them"
            )
        }
    }
}

/// The bounds on one image of a pass, checked by the build and by `inspect` (through ``ImageRules``).
/// Wallet shows small images, so a larger one is a mistake, or a bomb: a PNG of a few KB can declare
/// 50000×50000 pixels, 10 GB to decode on the phone that adds the pass.
package enum ImageLimits {
    /// The longest side, in pixels. Apple's largest pass image is a poster background of 345×505
    /// points (Human Interface Guidelines, "Pass image dimensions"; PassStyle.expectedSize), which is
    /// 1035×1515 pixels at @3x: 2048 leaves a third to spare.
    package static let maximumPixelSide = 2048
    /// The largest image file, in bytes: an image of 2048×2048 pixels at 8 bits per RGBA channel,
    /// stored without any compression (16 MiB). A real pass image is a few hundred KB.
    package static let maximumFileSize = maximumPixelSide * maximumPixelSide * 4

    /// `bytes` for a message: "16 MB", "60.5 MB".
    package static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + (1 << 19)) >> 20
        return tenths % 10 == 0 ? "\(tenths / 10) MB" : "\(tenths / 10).\(tenths % 10) MB"
    }
}
