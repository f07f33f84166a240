import AtomicFiles
import Crypto
package import Foundation
import Mustache
package import PassContent
import PassModel
package import PassRender
import WalletTree

/// The landing page beside every download link (`passforge build`): the item as Wallet shows it (the
/// preview's renderer), the project's badge linking the download, and a QR code of the page's own URL for a
/// computer's screen. Static: no script, no request outside the page's own host (images are inlined or beside
/// the page), noindex and no-referrer, with a Content-Security-Policy (the hosts send the same as headers).
///
/// Facts: Apple's Add to Apple Wallet guidelines (the badge is Apple's artwork, one per language; "include
/// instructions for opening" the page on iPhone or Mac); the W3C TAG's capability URL practices (no referrer,
/// no third-party requests, noindex). Notes in the README's "Landing pages and email".
package struct LandingPageRenderer: LandingPageMaking {
    /// Bumped when the built-in page changes, so that every page is made again.
    static let version = "landing-1"
    /// The policy of every page: its own images (and inline ones), its inline styles, nothing else.
    package static let contentSecurityPolicy = LandingPageList.contentSecurityPolicy

    package let configurationHash: String
    package let baseURL: String
    package let badges: [String: (path: String, bytes: [UInt8])]
    package let orderBadges: [String: (path: String, bytes: [UInt8])]
    /// What the build prints once (no badge files).
    package let warnings: [String]
    let template: MustacheTemplate

    /// Reads the badge files and the template named by `settings` (or `templates/_landing/page.mustache`).
    package init(configuration: ProjectConfiguration, templatesDirectory: String) throws(ContentErrors) {
        let settings = configuration.landingPages
        baseURL = settings.baseURL ?? Self.origin(of: configuration.defaultValue("webServiceURL")) ?? ""
        var problems: [ContentDiagnostic] = []
        func readBadges(_ table: [String: String], prefix: String) -> [String: (path: String, bytes: [UInt8])] {
            var badges: [String: (path: String, bytes: [UInt8])] = [:]
            for (language, file) in table {
                guard let bytes = AtomicFileSystem.readFile(file) else {
                    problems.append(
                        .error(
                            at: settings.location,
                            keyPath: [
                                "landingPages", .key(prefix == "badge" ? "badges" : "orderBadges"), .key(language),
                            ],
                            rule: "config.landing-pages",
                            "cannot read the badge file \(file); put Apple's badge artwork there (passforge ships none)"
                        ))
                    continue
                }
                let fileExtension = file.hasSuffix(".png") ? "png" : "svg"
                badges[language] = (
                    TreeLayout.badgePath(name: "\(prefix)-\(language)", fileExtension: fileExtension), bytes
                )
            }
            return badges
        }
        badges = readBadges(settings.badges, prefix: "badge")
        orderBadges = readBadges(settings.orderBadges, prefix: "order-badge")
        let (text, templateFile) = Self.templateText(settings: settings, templatesDirectory: templatesDirectory)
        do {
            template = try MustacheTemplate(string: text)
        } catch {
            problems.append(
                .error(
                    at: SourceLocation(file: templateFile ?? "landing page"), rule: "config.landing-template",
                    "the landing page template does not parse (\(error)); fix it or remove it to use the built-in page")
            )
            template = try! MustacheTemplate(string: "")  // never used: the problems are thrown below
        }
        if !problems.isEmpty { throw ContentErrors(problems) }
        var warnings: [String] = []
        if badges.isEmpty {
            warnings.append(
                "landing pages show a plain text link: passforge.yml names no badge files "
                    + "(landingPages.badges: {en: badges/add-to-apple-wallet-en.svg}; Apple's artwork, which "
                    + "passforge does not ship)")
        }
        if baseURL.isEmpty {
            warnings.append(
                "landing pages have no QR code and no Open Graph URL: set landingPages.baseURL "
                    + "(or webServiceURL) to the URL the output folder is served at")
        }
        self.warnings = warnings
        var hasher = SHA256()
        hasher.update(data: Array("\(Self.version)\n\(baseURL)\n\(text)\n".utf8))
        for (language, badge)
            in (badges.map { ("p" + $0.key, $0.value) } + orderBadges.map { ("o" + $0.key, $0.value) }).sorted(by: {
                $0.0 < $1.0
            })
        {
            hasher.update(data: Array("\(language)\n\(badge.path)\n".utf8) + badge.bytes)
        }
        configurationHash = hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// `https://host[:port]/` of a URL, or nil.
    static func origin(of text: String?) -> String? {
        guard let text, let url = URL(string: text), let scheme = url.scheme, let host = url.host else { return nil }
        return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")/"
    }

    static func templateText(settings: LandingPageSettings, templatesDirectory: String) -> (String, String?) {
        let file = settings.template ?? "\(templatesDirectory)/\(LandingPageSettings.defaultTemplatePath)"
        if let bytes = AtomicFileSystem.readFile(file) { return (String(decoding: bytes, as: UTF8.self), file) }
        return (LandingPageTemplate.builtIn, nil)
    }

    /// The absolute URL of a tree path ("" without a base URL).
    package func url(of path: String) -> String { baseURL.isEmpty ? "" : baseURL + path }

    package func pages(for item: LandingItem, now: Date) throws -> LandingPageOutput {
        let contents = try item.packages.map { try LandingContent(package: $0, kind: item.kind) }
        guard let first = contents.first else {
            throw BuildError(.missingInput, "the landing page of \(item.key) has no package to show")
        }
        let unavailable =
            contents.contains { $0.isVoided } || contents.contains { $0.expiresAt.map { $0 <= now } ?? false }
        let expiresAt = contents.compactMap(\.expiresAt).min()
        let languages = first.languages.map(\.language)
        let named = languages.count > 1 ? languages.filter { $0 != PreviewLanguages.defaultName } : []
        var files: [(path: String, bytes: [UInt8])] = []
        let logo = first.logo
        for (index, language) in ([languages[0]] + named).enumerated() {
            let isDefault = index == 0
            let path = TreeLayout.landingPagePath(capability: item.capability, language: isDefault ? nil : language)
            let page = LandingPageModel(
                renderer: self, item: item, contents: contents, language: language, languages: named,
                path: path, hasLogo: logo != nil, unavailable: unavailable, now: now)
            files.append((path, Array(page.render(with: template).utf8)))
        }
        if let logo { files.append((TreeLayout.landingImagePath(capability: item.capability), logo)) }
        return LandingPageOutput(files: files, expiresAt: expiresAt, unavailable: unavailable)
    }
}

/// One signed package, read back for its page: its JSON (barcodes and token taken out: a page is no ticket),
/// its images and strings.
struct LandingContent: Sendable {
    var item: UnsignedPass
    var languages: [(language: String, strings: [String: String])]

    init(package entries: [PackageFile], kind: WalletItemKind) throws {
        guard let root = entries.first(where: { $0.name == kind.rootFile }),
            case .object(var object) = try JSONValue(parsing: root.bytes)
        else { throw BuildError(.refused, "a signed package has no \(kind.rootFile) to show on its landing page") }
        for key in ["barcode", "barcodes", "authenticationToken"] { object[key] = nil }
        let files = entries.filter { ![kind.rootFile, "manifest.json", "signature"].contains($0.name) }
        let json = JSONValue.object(object)
        item = UnsignedPass(
            passTypeIdentifier: json[kind == .pass ? "passTypeIdentifier" : "orderTypeIdentifier"]?.stringValue ?? "",
            serialNumber: json[kind == .pass ? "serialNumber" : "orderIdentifier"]?.stringValue ?? "",
            templateName: "", sourceFile: "", passJSON: json, files: files, warnings: [], kind: kind)
        languages = PreviewLanguages.tables(of: files.map { ($0.name, $0.bytes) }, stringsFile: kind.stringsFile)
    }

    var isVoided: Bool { item.kind == .pass && item.passJSON["voided"]?.boolValue == true }

    var expiresAt: Date? {
        guard item.kind == .pass, let text = item.passJSON["expirationDate"]?.stringValue,
            let date = try? W3CDate(parsing: text)
        else { return nil }
        return Date(timeIntervalSince1970: date.secondsSince1970)
    }

    /// The PNG logo (a pass's logo.png; an order's merchant logo when it is a PNG), for the Open Graph image.
    var logo: [UInt8]? {
        let name = item.kind == .pass ? "logo.png" : item.passJSON["merchant"]?["logo"]?.stringValue ?? ""
        guard name.hasSuffix(".png") else { return nil }
        return item.files.first { $0.name == name }?.bytes
    }
}
