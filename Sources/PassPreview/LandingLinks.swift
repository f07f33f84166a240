import AtomicFiles
import Foundation
import PassModel
package import WalletTree

/// `passforge links`: for each item of the last build (or those a filter keeps), its landing page URL, its
/// download URL and an email snippet, as CSV, JSON or HTML. Read from the build state and
/// `.passforge/landing-pages.txt`: nothing is rendered, so a mail-merge of 100,000 passes takes a second.
///
/// The snippet is made for mail clients: a table with inline styles (no stylesheet survives Gmail or
/// Outlook), the badge as an absolute image URL with alt text (shown when images are blocked), the badge
/// linking the download (Apple's badge "should appear only in association with your Wallet-compatible pass"
/// and iPhone Mail adds it at once), and the landing page as a plain link for a computer, whose QR code
/// carries it to the phone. Gmail and Outlook for Windows do not draw SVG (caniemail): name PNG badges for email.
package struct LandingLinks: Sendable {
    package struct Filter: Sendable {
        package var template: String?
        package var offer: String?
        package var serials: Set<String> = []
        package init(template: String? = nil, offer: String? = nil, serials: Set<String> = []) {
            (self.template, self.offer, self.serials) = (template, offer, serials)
        }

        func keeps(_ item: PublishedItem) -> Bool {
            (template == nil || item.templateName == template) && (offer == nil || item.offer == offer)
                && (serials.isEmpty || serials.contains(item.identifier))
        }

        /// A bundle by its name (as a serial), or by its members' template; no bundle is in an offer.
        func keeps(bundle: BundleRecord, template memberTemplate: String?) -> Bool {
            (template == nil || memberTemplate == template) && offer == nil
                && (serials.isEmpty || serials.contains(bundle.name))
        }
    }

    package enum Format: String, Sendable, CaseIterable { case csv, json, html }

    /// One line of the output.
    package struct Row: Sendable {
        package var kind: String
        package var typeIdentifier: String
        package var identifier: String
        package var template: String
        package var offer: String
        package var landingURL: String
        package var downloadURL: String
        /// Expired or voided when the build made its page: no badge, no snippet.
        package var unavailable: Bool
        package var snippet: String
    }

    package let rows: [Row]

    /// `.passforge/landing-pages.txt` of the output folder, or nil.
    package static func pageList(in output: String) -> LandingPageList? {
        AtomicFileSystem.readFile(TreeLayout.path(LandingPageList.path, in: output)).flatMap(
            LandingPageList.init(decoding:))
    }

    /// `.passforge/bundles.json` of the output folder: the `.pkpasses` bundles, by name (none when there is no list).
    package static func bundles(in output: String) -> [String: BundleRecord] {
        let bytes = AtomicFileSystem.readFile(TreeLayout.path(BundleList.path, in: output))
        return bytes.flatMap { try? BundleList.records(decoding: $0, greatestTag: BuildState.greatestLocalTag) } ?? [:]
    }

    /// - Parameters:
    ///   - bundles: the `.pkpasses` bundles (`bundles.json`): a row each, after the items, kind `bundle`, its name as
    ///     the identifier, its members' pass type and template.
    ///   - baseURL: overrides the list's (`landingPages.baseURL`); must end in a slash.
    ///   - language: the badge's language in the snippet (its base language, then English, then any).
    package init(
        index: PublishedIndex, pages: LandingPageList?, bundles: [String: BundleRecord] = [:], baseURL: String?,
        filter: Filter, language: String = "en"
    ) {
        let base = baseURL ?? pages?.baseURL ?? ""
        let badges = pages?.badges ?? [:]
        let orderBadges = pages?.orderBadges ?? [:]
        func badge(_ table: [String: LandingFileRecord]) -> String? {
            let base = String(language.prefix { $0 != "-" })
            return (table[language] ?? table[base] ?? table["en"] ?? table.keys.sorted().first.map { table[$0]! }).map(
                \.path)
        }
        let passBadge = badge(badges)
        let orderBadge = badge(orderBadges)
        var rows: [Row] = []
        rows.reserveCapacity(index.items.count)
        for key in index.sortedKeys {
            let record = index.items[key]!
            guard filter.keeps(record) else { continue }
            let page = pages?.pages[key.text]
            let pagePath =
                page?.pagePath ?? TreeLayout.capability(ofDownloadPath: record.downloadPath)
                .map { TreeLayout.landingPagePath(capability: String($0)) } ?? ""
            let isOrder = record.kind == .order
            let landing = base + pagePath
            let download = base + record.downloadPath
            let unavailable = page?.unavailable ?? false
            let badgeURL = (isOrder ? orderBadge : passBadge).map { base + $0 }
            rows.append(
                Row(
                    kind: isOrder ? "order" : "pass", typeIdentifier: record.typeIdentifier,
                    identifier: record.identifier,
                    template: record.templateName, offer: record.offer ?? "", landingURL: landing,
                    downloadURL: download,
                    unavailable: unavailable,
                    snippet: unavailable
                        ? "" : Self.snippet(landing: landing, download: download, badge: badgeURL, isOrder: isOrder)))
        }
        for name in bundles.keys.sorted() {
            let bundle = bundles[name]!
            let first = bundle.members.first.flatMap { ItemKey($0, kind: .pass) }.flatMap { index.items[$0] }
            guard filter.keeps(bundle: bundle, template: first?.templateName) else { continue }
            let page = pages?.pages["bundle/\(name)"]
            let pagePath =
                page?.pagePath ?? TreeLayout.capability(ofDownloadPath: bundle.downloadPath)
                .map { TreeLayout.landingPagePath(capability: String($0)) } ?? ""
            let landing = base + pagePath
            let download = base + bundle.downloadPath
            let unavailable = page?.unavailable ?? false
            rows.append(
                Row(
                    kind: "bundle", typeIdentifier: first?.typeIdentifier ?? "", identifier: name,
                    template: first?.templateName ?? "", offer: "", landingURL: landing, downloadURL: download,
                    unavailable: unavailable,
                    snippet: unavailable
                        ? ""
                        : Self.snippet(
                            landing: landing, download: download,
                            badge: passBadge.map { base + $0 }, isOrder: false)))
        }
        self.rows = rows
    }

    /// The email snippet: tables and inline styles only.
    static func snippet(landing: String, download: String, badge: String?, isOrder: Bool) -> String {
        let label = isOrder ? "Track with Apple Wallet" : "Add to Apple Wallet"
        let (landing, download) = (attribute(landing), attribute(download))
        let button =
            badge.map {
                "<img src=\"\(attribute($0))\" alt=\"\(label)\" height=\"48\" "
                    + "style=\"display:block;border:0;outline:none;height:48px;width:auto;\">"
            } ?? "<span style=\"display:inline-block;padding:12px "
            + "18px;border-radius:10px;background:#000000;color:#ffffff;font:600 15px "
            + "Arial,sans-serif;\">\(label)</span>"
        return "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" "
            + "border=\"0\" style=\"border-collapse:collapse;\">"
            + "<tr><td style=\"padding:8px 0;\"><a href=\"\(download)\" "
            + "style=\"text-decoration:none;\">\(button)</a></td></tr>"
            + "<tr><td style=\"padding:4px 0;font:14px/1.4 Arial,sans-serif;color:#444444;\">On a computer? Open "
            + "<a href=\"\(landing)\" style=\"color:#0066cc;\">this page</a> and "
            + "scan its code with your iPhone.</td></tr></table>"
    }

    /// The URLs are the build's (base URL, `download/`, a base64url capability): escaped all the same,
    /// with the preview's one HTML escape.
    static func attribute(_ text: String) -> String { escape(text) }

    package func rendered(as format: Format) -> String {
        switch format {
        case .csv: csv()
        case .json: json()
        case .html: html()
        }
    }

    func csv() -> String {
        var text = "kind,typeIdentifier,identifier,template,offer,landingURL,downloadURL,unavailable,snippet\n"
        for row in rows {
            let fields = [
                row.kind, row.typeIdentifier, row.identifier, row.template, row.offer, row.landingURL, row.downloadURL,
                row.unavailable ? "true" : "false", row.snippet,
            ]
            text += fields.map(Self.csvField).joined(separator: ",") + "\n"
        }
        return text
    }

    /// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A field starting with
    /// `=`, `+`, `-` or `@` is one a spreadsheet would run as a formula: it is quoted with a leading `'`.
    static func csvField(_ text: String) -> String {
        var text = text
        if let first = text.first, "=+-@".contains(first) { text = "'" + text }
        // Bytes, not Characters: a mail-merge of 100,000 rows quotes every snippet (they hold quotes).
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var quoted: [UInt8] = [0x22]
        quoted.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            quoted.append(byte)
            if byte == 0x22 { quoted.append(0x22) }
        }
        quoted.append(0x22)
        return String(decoding: quoted, as: UTF8.self)
    }

    func json() -> String {
        var text = "[\n"
        for (index, row) in rows.enumerated() {
            text +=
                "  {\"kind\": \(Self.jsonString(row.kind)), \"typeIdentifier\": "
                + "\(Self.jsonString(row.typeIdentifier)), "
            text +=
                "\"identifier\": \(Self.jsonString(row.identifier)), \"template\": \(Self.jsonString(row.template)), "
            text += "\"offer\": \(row.offer.isEmpty ? "null" : Self.jsonString(row.offer)), "
            text +=
                "\"landingURL\": \(Self.jsonString(row.landingURL)), "
                + "\"downloadURL\": \(Self.jsonString(row.downloadURL)), "
            text += "\"unavailable\": \(row.unavailable), \"snippet\": \(Self.jsonString(row.snippet))}"
            text += index == rows.count - 1 ? "\n" : ",\n"
        }
        return text + "]\n"
    }

    static func jsonString(_ text: String) -> String {
        // Bytes, not scalars: a mail-merge of 100,000 rows escapes every snippet. Bytes of 0x80 and above
        // (UTF-8 beyond ASCII) are copied as they are.
        var escaped: [UInt8] = [0x22]
        escaped.reserveCapacity(text.utf8.count + 32)
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case 0x22: escaped += [0x5C, 0x22]  // \"
            case 0x5C: escaped += [0x5C, 0x5C]  // \\
            case 0x0A: escaped += [0x5C, 0x6E]  // \n
            case 0x0D: escaped += [0x5C, 0x72]  // \r
            case 0x09: escaped += [0x5C, 0x74]  // \t
            case 0x3C: escaped += Array("\\u003c".utf8)  // safe inside a <script> too
            case ..<0x20: escaped += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: escaped.append(byte)
            }
        }
        escaped.append(0x22)
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Each item's snippet after a comment naming it: to paste into a mail template, or open to look at.
    func html() -> String {
        var text =
            "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<meta name=\"robots\" "
            + "content=\"noindex\">\n<title>passforge links</title>\n"
        for row in rows {
            // Identifiers are [A-Za-z0-9._~-]: no "--" can end the comment early except in the identifier itself.
            let name = ItemKey.text(typeIdentifier: row.typeIdentifier, identifier: row.identifier)
                .replacingOccurrences(of: "--", with: "- -")
            text += "<!-- \(name) -->\n" + (row.unavailable ? "<p>(expired or voided)</p>" : row.snippet) + "\n"
        }
        return text
    }
}
