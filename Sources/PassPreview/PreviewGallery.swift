import AtomicFiles
import Foundation
package import PassContent
import PassModel
package import PassRender
import WalletTree

/// `passforge preview`: the gallery of every pass and order, as static HTML.
///
/// `index.html` lists them grouped by template; each pass has its page at
/// `<passTypeIdentifier>/<serialNumber>.html`, each order at
/// `<orderTypeIdentifier>/<orderIdentifier>.html` (the build refuses a type
/// identifier used for both, so the folders do not meet).
package struct PreviewGallery: Sendable {
    package var directory: String
    package var liveReload = false
    /// The build's output folder: a pass (order) the last build made a landing page for links it, and the page is
    /// copied into the gallery's `_landing/` with its images and download, so that it opens from file:// and is
    /// served by `--watch`. nil: no links.
    package var output: String?

    package init(directory: String, liveReload: Bool = false, output: String? = nil) {
        self.directory = directory
        self.liveReload = liveReload
        self.output = output
    }

    /// The gallery's folder of landing pages: `_` is in no type identifier, so it meets no pass's folder.
    static let landingFolder = "_landing"

    /// The pages of `passes` and orders (and the index), with `errors` on top of each
    /// when the content does not build. Writes only the files whose bytes
    /// changed and returns their paths relative to the gallery; pages of
    /// passes that are gone are removed (and listed too).
    @discardableResult
    package func write(_ passes: [UnsignedPass], errors: [ContentDiagnostic] = []) throws -> [String] {
        let landing = landingPages(of: passes)
        var pages: [String: [UInt8]] = landing.files
        for pass in passes {
            let link = landing.links[PassPage.path(of: pass)]
            pages[PassPage.path(of: pass)] =
                switch pass.kind {
                case .pass:
                    Array(
                        PassPage(pass: pass, projectErrors: errors, liveReload: liveReload, landingPage: link).html()
                            .utf8)
                case .order:
                    Array(
                        OrderPage(order: pass, projectErrors: errors, liveReload: liveReload, landingPage: link).html()
                            .utf8)
                }
        }
        pages["index.html"] = Array(index(passes, errors: errors, bundles: landing.bundles).utf8)
        var changed: [String] = []
        for (path, bytes) in pages.sorted(by: { $0.key < $1.key }) {
            let full = (directory as NSString).appendingPathComponent(path)
            if AtomicFileSystem.readFile(full) == bytes { continue }
            try AtomicFileSystem.createDirectory((full as NSString).deletingLastPathComponent)
            try AtomicFileSystem.write(bytes, to: full)
            changed.append(path)
        }
        for stale in existingPages() where pages[stale] == nil {
            AtomicFileSystem.removeTree((directory as NSString).appendingPathComponent(stale))
            changed.append(stale)
        }
        return changed
    }

    /// Pass pages already in the gallery: `*/*.html`, and every file of `_landing/`.
    func existingPages() -> [String] {
        let folders = AtomicFileSystem.directoryEntries(directory)?.map(\.name) ?? []
        return folders.flatMap { folder -> [String] in
            let files =
                AtomicFileSystem.directoryEntries((directory as NSString).appendingPathComponent(folder))?.map(\.name)
                ?? []
            return files.filter { $0.hasSuffix(".html") || folder == Self.landingFolder }.map { "\(folder)/\($0)" }
        }
    }

    /// The landing pages the last build made for `passes` (`output`'s landing-pages.txt): the files to copy into
    /// `_landing/` (each page, its logo, the badges, the download it links, all by their names in `download/`,
    /// so the page's relative links hold), each pass page's link to its landing page, and each `.pkpasses`
    /// bundle's landing page (linked from the index).
    func landingPages(of passes: [UnsignedPass])
        -> (files: [String: [UInt8]], links: [String: String], bundles: [(name: String, href: String)])
    {
        guard let output, let bytes = AtomicFileSystem.readFile(TreeLayout.path(LandingPageList.path, in: output)),
            let list = LandingPageList(decoding: bytes)
        else { return ([:], [:], []) }
        var files: [String: [UInt8]] = [:]
        var links: [String: String] = [:]
        func copy(_ path: String) -> Bool {
            guard let bytes = AtomicFileSystem.readFile(TreeLayout.path(path, in: output)) else { return false }
            files["\(Self.landingFolder)/\(TreeLayout.fileName(of: path))"] = bytes
            return true
        }
        for pass in passes {
            let page = PassPage.path(of: pass)
            guard let record = list.pages[String(page.dropLast(".html".count))], let pagePath = record.pagePath,
                record.files.allSatisfy({ copy($0.path) })
            else { continue }
            if let capability = TreeLayout.capability(ofDownloadPath: pagePath) {
                _ = copy(TreeLayout.capabilityDownloadPath(capability: String(capability), kind: pass.kind))
            }
            links[page] = "../\(Self.landingFolder)/\(TreeLayout.fileName(of: pagePath))"
        }
        var bundles: [(name: String, href: String)] = []
        for (key, record) in list.pages.sorted(by: { $0.key < $1.key }) where key.hasPrefix("bundle/") {
            guard let pagePath = record.pagePath, let capability = TreeLayout.capability(ofDownloadPath: pagePath),
                record.files.allSatisfy({ copy($0.path) })
            else { continue }
            _ = copy(TreeLayout.bundleDownloadPath(capability: String(capability)))
            bundles.append(
                (String(key.dropFirst("bundle/".count)), "\(Self.landingFolder)/\(TreeLayout.fileName(of: pagePath))"))
        }
        if !links.isEmpty || !bundles.isEmpty {
            for badge in Array(list.badges.values) + Array(list.orderBadges.values) { _ = copy(badge.path) }
        }
        return (files, links, bundles)
    }

    func index(_ passes: [UnsignedPass], errors: [ContentDiagnostic], bundles: [(name: String, href: String)] = [])
        -> String
    {
        let orders = passes.count { $0.kind == .order }
        let passCount = passes.count - orders
        let counts =
            "\(passCount) pass\(passCount == 1 ? "" : "es")"
            + (orders == 0 ? "" : ", \(orders) order\(orders == 1 ? "" : "s")")
        var body =
            "<header class=\"top\"><h1>passforge preview</h1><span class=\"meta\">\(counts) "
            + "· front, back, every language · unsigned</span></header>"
        body += PreviewHTML.errorPanel(errors)
        body += "<main class=\"gallery\">"
        let byTemplate = Dictionary(grouping: passes, by: \.templateName)
        for template in byTemplate.keys.sorted() {
            body += "<h2>\(escape(template))</h2><div class=\"cards\">"
            for pass in byTemplate[template]! {
                body += pass.kind == .order ? orderCard(pass) : card(pass)
            }
            body += "</div>"
        }
        if passes.isEmpty { body += "<p>No pass or order builds yet.</p>" }
        if !bundles.isEmpty {
            // A bundle has no page of its own in the gallery: its landing page is its preview.
            body += "<h2>Bundles</h2><ul class=\"bundles\">"
            for bundle in bundles {
                body +=
                    "<li><a class=\"landing\" href=\"\(escape(bundle.href))\">"
                    + "\(escape(bundle.name))</a> · landing page</li>"
            }
            body += "</ul>"
        }
        body += "</main>"
        return PreviewHTML.document(title: "passforge preview", body: body, liveReload: liveReload)
    }

    /// A thumbnail of the pass's front: its colours, logo, logo text and first primary field.
    func card(_ pass: UnsignedPass) -> String {
        let page = PassPage(pass: pass)
        let json = pass.passJSON
        let formatter = FieldFormatter(
            language: PreviewLanguages.tables(of: pass.files.map { ($0.name, $0.bytes) })[0].language)
        let background = page.color("backgroundColor") ?? "rgb(245, 245, 247)"
        let foreground = page.color("foregroundColor") ?? "rgb(0, 0, 0)"
        var html =
            "<a class=\"card\" href=\"\(escape(PassPage.path(of: pass)))\" "
            + "style=\"background: \(background); color: \(foreground)\">"
        if let logo = page.image("logo", language: formatter.language)
            ?? page.image("icon", language: formatter.language)
        {
            html += "<img alt=\"\" src=\"\(logo)\"> "
        }
        html += escape(json["logoText"]?.stringValue ?? json["organizationName"]?.stringValue ?? "")
        let primary = page.style.flatMap { json[$0.key]?[FieldArea.primary.key]?.arrayValue?.first }
        if let primary { html += "<div class=\"primary-value\">\(escape(formatter.value(of: primary)))</div>" }
        html +=
            "<div class=\"serial\">\(escape(pass.serialNumber)) · "
            + "\(escape(page.layoutName))\(pass.warnings.isEmpty ? "" : " · \(pass.warnings.count) warning\(pass.warnings.count == 1 ? "" : "s")")</div></a>"
        return html
    }

    /// A thumbnail of an order: the merchant's logo and name, the status as Wallet words it, the total.
    func orderCard(_ order: UnsignedPass) -> String {
        let page = OrderPage(order: order)
        let json = page.json
        let formatter = FieldFormatter(language: page.languages[0].language)
        let status = OrderStatusWords.headline(
            orderStatus: json["status"]?.stringValue,
            firstFulfillmentStatus: json["fulfillments"]?.arrayValue?.first?["status"]?.stringValue)
        var html = "<a class=\"card order-card\" href=\"\(escape(PassPage.path(of: order)))\">"
        if let logo = json["merchant"]?["logo"]?.stringValue.flatMap({
            page.image(named: $0, language: formatter.language)
        }) {
            html += "<img alt=\"\" src=\"\(logo)\"> "
        }
        html += escape(json["merchant"]?["displayName"]?.stringValue ?? "")
        html += "<div class=\"primary-value\">\(escape(status))</div>"
        if let total = formatter.money(json["payment"]?["total"]) {
            html += "<div class=\"order-total\">\(escape(total))</div>"
        }
        let warnings = order.warnings.count
        html +=
            "<div class=\"serial\">\(escape(page.title)) · "
            + "order\(warnings == 0 ? "" : " · \(warnings) warning\(warnings == 1 ? "" : "s")")</div></a>"
        return html
    }
}
