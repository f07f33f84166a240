import Foundation
import PassModel

/// `landingPages:` in passforge.yml: the page `passforge build` writes beside every download link.
///
/// ```yaml
/// landingPages:
///   baseURL: https://passes.example.com/           # where the output folder is served (default: webServiceURL's origin)
///   badges:                                        # Apple's "Add to Apple Wallet" artwork, one file per language
///     en: badges/add-to-apple-wallet-en.svg
///   orderBadges:                                   # "Track with Apple Wallet", for orders
///     en: badges/track-with-apple-wallet-en.svg
///   template: templates/_landing/page.mustache     # default: that file when it exists
///   enabled: false                                 # no pages at all
/// ```
///
/// Apple licenses its badge artwork to issuers and asks that only its own files be used ("Be sure to use
/// the badges provided by Apple. Do not create your own versions", Add to Apple Wallet guidelines), so
/// passforge ships none: without badge files the page shows a plain text link.
package struct LandingPageSettings: Sendable, Equatable {
    /// Absolute URL of the output folder, ending in a slash; nil to take webServiceURL's origin.
    package var baseURL: String?
    /// Language (`en`, `fr`, `pt-BR`) → badge file path, resolved against passforge.yml's folder.
    package var badges: [String: String] = [:]
    package var orderBadges: [String: String] = [:]
    /// The Mustache template that replaces the built-in page, resolved against passforge.yml's folder.
    package var template: String?
    package var enabled = true
    package var location: SourceLocation

    package init(
        baseURL: String? = nil, badges: [String: String] = [:], orderBadges: [String: String] = [:],
        template: String? = nil, enabled: Bool = true, location: SourceLocation = SourceLocation(file: "passforge.yml")
    ) {
        (self.baseURL, self.badges, self.orderBadges, self.template) = (baseURL, badges, orderBadges, template)
        (self.enabled, self.location) = (enabled, location)
    }

    /// The default template path, relative to the templates folder: a folder whose name starts with `_`
    /// is never a pass template.
    package static let defaultTemplatePath = "_landing/page.mustache"
}

extension ProjectConfiguration {
    static let landingPageKeys = ["baseURL", "badges", "orderBadges", "template", "enabled"]

    static func parseLandingPages(
        _ member: SourceNode.Member, resolve: (String) -> String,
        problems: inout [ContentDiagnostic]
    ) -> LandingPageSettings? {
        let path: JSONPath = ["landingPages"]
        guard let members = member.value.members else {
            problems.append(
                .error(
                    at: member.value.location, keyPath: path, rule: "config.type",
                    "landingPages must be a map: \(landingPageKeys.joined(separator: ", "))"))
            return nil
        }
        var settings = LandingPageSettings(location: member.keyLocation)
        for inner in members {
            let keyPath = path.appending(inner.key)
            switch inner.key {
            case "baseURL":
                guard let text = inner.value.stringValue, let url = URL(string: text),
                    ["https", "http"].contains(url.scheme ?? ""),
                    url.host != nil, url.query == nil, url.fragment == nil
                else {
                    problems.append(
                        .error(
                            at: inner.value.location, keyPath: keyPath, rule: "config.landing-pages",
                            "landingPages.baseURL must be the absolute https:// URL the output "
                                + "folder is served at, e.g. https://passes.example.com/"))
                    continue
                }
                settings.baseURL = text.hasSuffix("/") ? text : text + "/"
            case "badges", "orderBadges":
                guard let table = parseBadges(inner, at: keyPath, resolve: resolve, problems: &problems) else {
                    continue
                }
                if inner.key == "badges" { settings.badges = table } else { settings.orderBadges = table }
            case "template":
                guard let text = inner.value.stringValue else {
                    problems.append(
                        .error(
                            at: inner.value.location, keyPath: keyPath, rule: "config.type",
                            "landingPages.template must be a file path"))
                    continue
                }
                settings.template = resolve(text)
            case "enabled":
                guard case .bool(let flag)? = inner.value.scalarValue else {
                    problems.append(
                        .error(
                            at: inner.value.location, keyPath: keyPath, rule: "config.type",
                            "landingPages.enabled must be true or false"))
                    continue
                }
                settings.enabled = flag
            default:
                problems.append(
                    .error(
                        at: inner.keyLocation, keyPath: keyPath, rule: "config.unknown-key",
                        "unknown setting `landingPages.\(inner.key)`; landingPages knows "
                            + "\(landingPageKeys.joined(separator: ", "))"))
            }
        }
        return settings
    }

    /// `badges:` (`orderBadges:`): a language code to a badge file (.svg or .png), resolved; nil when not a map.
    private static func parseBadges(
        _ inner: SourceNode.Member, at keyPath: JSONPath, resolve: (String) -> String,
        problems: inout [ContentDiagnostic]
    ) -> [String: String]? {
        guard let entries = inner.value.members else {
            problems.append(
                .error(
                    at: inner.value.location, keyPath: keyPath, rule: "config.type",
                    "landingPages.\(inner.key) must map a language (en, fr, pt-BR) to a badge file "
                        + "(.svg or .png)"))
            return nil
        }
        var table: [String: String] = [:]
        for entry in entries {
            let file = entry.value.stringValue ?? ""
            let isLanguage =
                (1...35).contains(entry.key.utf8.count)
                && entry.key.utf8.allSatisfy { IdentifierPatterns.isBase64URL($0) && $0 != UInt8(ascii: "_") }
            guard isLanguage, file.hasSuffix(".svg") || file.hasSuffix(".png") else {
                problems.append(
                    .error(
                        at: entry.keyLocation, keyPath: keyPath.appending(entry.key),
                        rule: "config.landing-pages",
                        "landingPages.\(inner.key).\(entry.key) must map a language code (letters, digits, "
                            + "-) to an .svg or .png file of Apple's badge artwork"))
                continue
            }
            table[entry.key] = resolve(file)
        }
        return table
    }
}
