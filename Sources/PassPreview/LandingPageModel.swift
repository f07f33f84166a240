import Barcodes
import Foundation
import Mustache
import PassModel
import PassRender
import WalletTree

/// The values one landing page's template sees (the README lists them). Every text from the item is passed
/// as text, escaped by the template's `{{…}}`; `pass` and `qr` are HTML the preview's renderer escaped.
struct LandingPageModel {
    let renderer: LandingPageRenderer
    let item: LandingItem
    let contents: [LandingContent]
    let language: String
    /// The item's languages when it has several (each has its page), else none.
    let languages: [String]
    /// This page's path in the tree.
    let path: String
    let hasLogo: Bool
    let unavailable: Bool
    let now: Date

    var text: LandingText { LandingText.table(for: htmlLanguage) }
    /// The page's `lang`: the item's language, English for an item without `.lproj` folders.
    var htmlLanguage: String { language == PreviewLanguages.defaultName ? "en" : language }

    func render(with template: MustacheTemplate) -> String {
        var page = template.render(values())
        // The preview masks the token where it shows it; a page never shows it at all.
        for content in contents {
            if let token = content.item.authenticationToken { page = page.replacingOccurrences(of: token, with: "") }
        }
        return page
    }

    func values() -> [String: Any] {
        let first = contents[0]
        let json = first.item.passJSON
        let name =
            item.kind == .order
            ? json["merchant"]?["displayName"]?.stringValue ?? "" : json["organizationName"]?.stringValue ?? ""
        let description =
            item.kind == .order
            ? json["orderNumber"]?.stringValue.map { "\(text.order) \($0)" } ?? ""
            : localized(json["description"]?.stringValue ?? "", first)
        let title = name.isEmpty ? description : name
        var values: [String: Any] = [
            "lang": htmlLanguage,
            "title": title, "name": name, "description": description, "csp": LandingPageRenderer.contentSecurityPolicy,
            "css": Self.css, "pass": cards(),
            "isOrder": item.kind == .order, "isBundle": item.isBundle, "download": downloadName,
            "text": text.values(isOrder: item.kind == .order),
            "og": [
                "title": title, "description": description, "image": hasLogo ? renderer.url(of: logoPath) : "",
                "url": renderer.url(of: path),
            ] as [String: Any],
        ]
        if unavailable {
            let voided = contents.contains(where: \.isVoided)
            values["unavailable"] = voided ? text.voided : text.expired
        } else {
            values.merge(offer(), uniquingKeysWith: { _, new in new })
        }
        let pages = languages.map { code -> [String: Any] in
            let target = TreeLayout.landingPagePath(capability: item.capability, language: code)
            return ["code": code, "href": TreeLayout.fileName(of: target), "current": code == language]
        }
        values["languages"] = pages
        values["hasLanguages"] = !pages.isEmpty
        values["alternates"] =
            renderer.baseURL.isEmpty
            ? []
            : languages.map { code in
                [
                    "code": code,
                    "href": renderer.url(of: TreeLayout.landingPagePath(capability: item.capability, language: code)),
                ]
            }
        return values
    }

    /// The page's styles, joined once per process rather than once per page.
    static let css = PreviewHTML.css + LandingPageTemplate.css

    var downloadName: String { String(TreeLayout.fileName(of: item.downloadPath)) }
    var logoPath: String { TreeLayout.landingImagePath(capability: item.capability) }

    /// The badge (or the plain link), the instructions and the QR code.
    func offer() -> [String: Any] {
        var values: [String: Any] = [
            "link": ["href": downloadName, "text": item.kind == .order ? text.trackLink : text.addLink]
        ]
        let badges = item.kind == .order ? renderer.orderBadges : renderer.badges
        if let badge = Self.badge(for: language, in: badges) {
            values["badge"] = [
                "href": downloadName, "src": String(TreeLayout.fileName(of: badge.path)),
                "alt": item.kind == .order ? "Track with Apple Wallet" : "Add to Apple Wallet",
            ]
        }
        let pageURL = renderer.url(of: path)
        if !pageURL.isEmpty {
            values["qr"] = PassPage.barcode(pageURL, format: .qr, messageEncoding: "utf-8", altText: nil)
            values["pageURL"] = pageURL
        }
        return values
    }

    /// The badge of `language`, else of its base language (`fr` for `fr-CA`), else English, else the first.
    static func badge(for language: String, in badges: [String: (path: String, bytes: [UInt8])]) -> (
        path: String, bytes: [UInt8]
    )? {
        let base = String(language.prefix { $0 != "-" && $0 != "_" })
        return badges[language] ?? badges[base] ?? badges["en"] ?? badges.keys.sorted().first.map { badges[$0]! }
    }

    func localized(_ text: String, _ content: LandingContent) -> String {
        content.languages.first { $0.language == language }?.strings[text] ?? content.languages[0].strings[text] ?? text
    }

    /// The item as Wallet shows it: a pass's front (each member's, for a bundle), an order's details, in
    /// this page's language, with the item's dates and places.
    func cards() -> String {
        var html = "<div class=\"sides\">"
        for content in contents {
            let strings = content.languages.first { $0.language == language }?.strings ?? content.languages[0].strings
            let formatter = FieldFormatter(
                language: language, strings: strings, deviceTimeZone: TimeZone(identifier: "UTC")!, now: now)
            if item.kind == .order {
                html += OrderPage(order: content.item).details(formatter)
            } else {
                html += PassPage(pass: content.item).front(formatter)
            }
        }
        html += "</div>" + whenAndWhere()
        return html
    }

    /// The relevant date and places of a pass (Wallet shows it on the lock screen then and there).
    func whenAndWhere() -> String {
        guard item.kind == .pass, !item.isBundle else { return "" }
        let json = contents[0].item.passJSON
        var lines: [String] = []
        let dates =
            [json["relevantDate"]?.stringValue].compactMap { $0 }
            + (json["relevantDates"]?.arrayValue ?? []).compactMap {
                $0["startDate"]?.stringValue ?? $0["date"]?.stringValue
            }
        for date in dates.prefix(3) {
            guard let parsed = try? W3CDate(parsing: date) else { continue }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: htmlLanguage)
            formatter.timeZone = TimeZone(secondsFromGMT: parsed.utcOffset) ?? TimeZone(identifier: "UTC")!
            formatter.dateStyle = .full
            formatter.timeStyle = .short
            lines.append(escape(formatter.string(from: Date(timeIntervalSince1970: parsed.secondsSince1970))))
        }
        for location in (json["locations"]?.arrayValue ?? []).prefix(3) {
            if let text = location["relevantText"]?.stringValue { lines.append(escape(localized(text, contents[0]))) }
        }
        guard !lines.isEmpty else { return "" }
        return "<ul class=\"when-where\">" + lines.map { "<li>\($0)</li>" }.joined() + "</ul>"
    }
}

/// The page's own words, in the languages passforge has them for (English otherwise). The badge's label is
/// Apple's artwork and never retyped; these are the instructions around it.
struct LandingText {
    var addLink: String, trackLink: String, instructions: String, scan: String, expired: String, voided: String
    var order: String, languages: String

    func values(isOrder: Bool) -> [String: Any] {
        ["instructions": instructions, "scan": scan, "languages": languages]
    }

    static func table(for language: String) -> LandingText {
        switch language.prefix(2) {
        case "fr":
            LandingText(
                addLink: "Ajouter à Apple Wallet", trackLink: "Suivre avec Apple Wallet",
                instructions: "Ouvrez cette page sur votre iPhone ou votre Mac pour ajouter le pass à Cartes.",
                scan: "Sur un ordinateur ? Scannez ce code avec l’appareil photo de votre iPhone.",
                expired: "Ce pass a expiré.", voided: "Ce pass n’est plus valable.", order: "Commande",
                languages: "Langues")
        case "de":
            LandingText(
                addLink: "Zu Apple Wallet hinzufügen", trackLink: "Mit Apple Wallet verfolgen",
                instructions: "Öffne diese Seite auf deinem iPhone oder Mac, um den Pass zu Wallet hinzuzufügen.",
                scan: "Am Computer? Scanne diesen Code mit der Kamera deines iPhone.",
                expired: "Dieser Pass ist abgelaufen.", voided: "Dieser Pass ist nicht mehr gültig.",
                order: "Bestellung",
                languages: "Sprachen")
        default:
            LandingText(
                addLink: "Add to Apple Wallet", trackLink: "Track with Apple Wallet",
                instructions: "Open this page on your iPhone or Mac to add it to Wallet.",
                scan: "On a computer? Scan this code with your iPhone’s camera.",
                expired: "This pass has expired.", voided: "This pass is no longer valid.", order: "Order",
                languages: "Languages")
        }
    }
}
