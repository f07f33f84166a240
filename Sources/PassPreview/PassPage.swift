import Barcodes
package import Foundation
package import PassContent
import PassModel
package import PassRender
import WalletTree

/// One pass's preview page: the front and the back as Wallet lays out its
/// style, in every language of the pass, with its dates, locations, barcode
/// and warnings. Self-contained (images inlined), so it opens from file://.
package struct PassPage: Sendable {
    /// With its authenticationToken masked (`maskingAuthenticationToken`).
    package let pass: UnsignedPass
    /// The real token, which no page shows.
    private let hiddenToken: String?
    /// Problems of the whole project, shown on top (the --watch server sets them while content is broken).
    package var projectErrors: [ContentDiagnostic] = []
    /// Adds the script that reloads the page when the --watch server says so.
    package var liveReload = false
    package var deviceTimeZone: TimeZone = .current
    /// The item's landing page, relative to this page (`../_landing/<capability>.html`), when the build made one.
    package var landingPage: String?

    package init(
        pass: UnsignedPass, projectErrors: [ContentDiagnostic] = [], liveReload: Bool = false,
        landingPage: String? = nil
    ) {
        self.landingPage = landingPage
        self.pass = pass.maskingAuthenticationToken()
        hiddenToken = pass.authenticationToken
        self.projectErrors = projectErrors
        self.liveReload = liveReload
    }

    /// `<passTypeIdentifier>/<serialNumber>.html`, relative to the gallery.
    package static func path(of pass: UnsignedPass) -> String { "\(pass.passTypeIdentifier)/\(pass.serialNumber).html" }

    var json: JSONValue { pass.passJSON }

    /// The style whose key the pass.json has.
    var style: PassStyle? { PassStyle.allCases.first { json[$0.key] != nil } }

    /// The layout Wallet uses: a preferred style scheme when the pass lists one it meets, else the style.
    package var layoutName: String {
        if let scheme = PassStyleScheme.active(in: json) { return scheme.rawValue }
        return style?.key ?? "generic"
    }

    package func html() -> String {
        let languages = PreviewLanguages.tables(of: pass.files.map { ($0.name, $0.bytes) })
        var header = "<a href=\"../index.html\">← all passes</a> <h1>\(escape(pass.serialNumber))</h1>"
        header +=
            "<span class=\"meta\">template <b>\(escape(pass.templateName))</b> · \(escape(layoutName)) · "
            + "\(escape(pass.passTypeIdentifier)) · <code>\(escape(pass.sourceFile))</code></span>"
        if let landingPage { header += " <a class=\"landing\" href=\"\(escape(landingPage))\">landing page</a>" }
        return PreviewHTML.itemPage(
            title: "\(pass.serialNumber) · \(json["description"]?.stringValue ?? pass.templateName)", header: header,
            languages: languages, deviceTimeZone: deviceTimeZone, errors: projectErrors,
            section: { front($0) + back($0) }, trailer: details(),
            data: [("pass-strings", PreviewHTML.stringTables(languages)), ("pass-json", json)],
            hiddenToken: hiddenToken, liveReload: liveReload)
    }

    // MARK: - Front

    func front(_ f: FieldFormatter) -> String {
        let styleObject = style.flatMap { json[$0.key] } ?? .object(JSONObject())
        let background = color("backgroundColor") ?? "rgb(245, 245, 247)"
        let foreground = color("foregroundColor") ?? "rgb(0, 0, 0)"
        let label = color("labelColor") ?? foreground
        let layout = layoutName
        var html =
            "<div class=\"pass front \(escape(layout))\" style=\"--bg: "
            + "\(background); --fg: \(foreground); --label: \(label)\">"
        if let image = image("background", language: f.language),
            layout == "eventTicket" || layout == "posterEventTicket" || layout == "posterGeneric"
        {
            html += "<img class=\"background-image\" alt=\"\" src=\"\(image)\">"
        }
        if let artwork = image("artwork", language: f.language) {
            html += "<img class=\"background-image artwork\" alt=\"\" src=\"\(artwork)\">"
        }
        html += "<div class=\"row top-row\">"
        if let logo = image(layout.hasPrefix("poster") ? "primaryLogo" : "logo", language: f.language)
            ?? image("logo", language: f.language)
        {
            html += "<img class=\"logo\" alt=\"logo\" src=\"\(logo)\">"
        }
        if let logoText = json["logoText"]?.stringValue {
            html += "<span class=\"logo-text\">\(escape(f.localized(logoText)))</span>"
        }
        html += "<span class=\"spacer\"></span>"
        html += fields(styleObject, .header, f)
        html += "</div>"
        let strip = image("strip", language: f.language)
        let thumbnail = image("thumbnail", language: f.language)
        switch layout {
        case "boardingPass", "semanticBoardingPass":
            html += "<div class=\"row primary boarding\">"
            let primary = fieldList(styleObject, .primary)
            if let first = primary.first { html += field(first, f, area: "primary") }
            html +=
                "<span class=\"transit\" "
                + "title=\"\(escape(styleObject["transitType"]?.stringValue ?? ""))\">\(transitSymbol(styleObject["transitType"]?.stringValue))</span>"
            for other in primary.dropFirst() { html += field(other, f, area: "primary", alignRight: true) }
            html += "</div>"
            html += "<div class=\"row\">\(fields(styleObject, .auxiliary, f))</div>"
            html += "<div class=\"row\">\(fields(styleObject, .secondary, f))</div>"
            if let footer = image("footer", language: f.language) {
                html += "<img class=\"footer-image\" alt=\"footer\" src=\"\(footer)\">"
            }
        case "coupon", "storeCard",
            "eventTicket" where strip != nil:
            html +=
                "<div class=\"strip\"\(strip.map { " style=\"background-image: url('\($0)')\"" } ?? "")>\(fields(styleObject, .primary, f, area: "primary"))</div>"
            html +=
                "<div class=\"row\">\(fields(styleObject, .secondary, f))\(fields(styleObject, .auxiliary, f))</div>"
        default:
            html +=
                "<div class=\"row primary-with-thumbnail\"><div "
                + "class=\"column\">\(fields(styleObject, .primary, f, area: "primary"))</div>"
            if let thumbnail { html += "<img class=\"thumbnail\" alt=\"thumbnail\" src=\"\(thumbnail)\">" }
            html += "</div>"
            html += "<div class=\"row\">\(fields(styleObject, .secondary, f))</div>"
            html += "<div class=\"row\">\(fields(styleObject, .auxiliary, f))</div>"
        }
        if let footerFields = styleObject[FieldArea.footer.key]?.arrayValue, !footerFields.isEmpty {
            html += "<div class=\"row\">\(fields(styleObject, .footer, f))</div>"
        }
        if let secondaryLogo = image("secondaryLogo", language: f.language) {
            html += "<img class=\"secondary-logo\" alt=\"\" src=\"\(secondaryLogo)\">"
        }
        html += barcode(f)
        html += "</div>"
        return html
    }

    func barcode(_ f: FieldFormatter) -> String {
        let entries =
            (json["barcodes"]?.arrayValue ?? []) + (json["barcodes"] == nil ? [json["barcode"]].compactMap { $0 } : [])
        // Wallet shows the first barcode the device can draw; every one here draws.
        guard let barcode = entries.first,
            let format = barcode["format"]?.stringValue.flatMap(BarcodeFormat.init(rawValue:)),
            let message = barcode["message"]?.stringValue
        else { return "" }
        let encoding = barcode["messageEncoding"]?.stringValue ?? "iso-8859-1"
        return Self.barcode(
            message, format: format, messageEncoding: encoding,
            altText: barcode["altText"]?.stringValue.map(f.localized))
    }

    /// A scannable barcode (drawn by libzint as SVG) with its alt text; a pass's and a pickup order's.
    static func barcode(_ message: String, format: BarcodeFormat, messageEncoding: String, altText: String?) -> String {
        var html =
            "<div class=\"barcode \(format.isLinear ? "linear" : "matrix")\" "
            + "data-format=\"\(escape(format.rawValue))\">"
        switch BarcodeEncoder.image(message, format: format, messageEncoding: messageEncoding) {
        case .success(let image):
            // About 3–4 screen pixels per module, so that a photo or a screenshot scans; wide symbols shrink to fit,
            // to 2.
            let scale = max(2, min(format.isLinear ? 3.0 : 4.0, 320 / image.width))
            html +=
                "<div class=\"barcode-image\" style=\"width: \(Int(image.width * scale))px; "
                + "height: \(Int(image.height * scale))px\">\(image.svg)</div>"
        case .failure(let error):
            html +=
                "<p class=\"barcode-error\">cannot draw this "
                + "\(escape(format.displayName)) barcode: \(escape(error.reason))</p>"
        }
        if let altText { html += "<div class=\"alt-text\">\(escape(altText))</div>" }
        html += "</div>"
        return html
    }

    // MARK: - Back

    func back(_ f: FieldFormatter) -> String {
        let styleObject = style.flatMap { json[$0.key] } ?? .object(JSONObject())
        var html = "<div class=\"pass back\"><h2>Back of the pass</h2><dl>"
        for entry in fieldList(styleObject, .back) + fieldList(styleObject, .additionalInfo) {
            // Apple: attributedValue "overrides the text specified by the value key"; its links are the only markup.
            let shown =
                entry["attributedValue"]?.stringValue.map { attributed(f.localized($0)) }
                ?? linked(f.value(of: entry), entry)
            html +=
                "<div class=\"back-field\" "
                + "data-key=\"\(escape(entry["key"]?.stringValue ?? ""))\"><dt>\(escape(f.localized(entry["label"]?.stringValue ?? "")))</dt><dd>\(shown)</dd></div>"
        }
        html += "</dl></div>"
        return html
    }

    /// An attributedValue as HTML that can do no harm: read by libxml2 (`AttributedValue`), its links with an
    /// https, http, tel or mailto target become links with the target escaped; everything else, tags included, is text.
    func attributed(_ text: String) -> String {
        AttributedValue.reading(text).segments.map { segment in
            switch segment {
            case .text(let text):
                escape(text).replacingOccurrences(of: "\n", with: "<br>")
            case .link(let href, let text):
                "<a href=\"\(escape(href))\" rel=\"noopener noreferrer\">\(escape(text))</a>"
            }
        }.joined()
    }

    func linked(_ value: String, _ field: JSONValue) -> String {
        let detectors = field["dataDetectorTypes"]?.arrayValue?.compactMap(\.stringValue)
        let detectsLinks = detectors == nil || detectors!.contains("PKDataDetectorTypeLink")
        if detectsLinks, value.hasPrefix("https://") || value.hasPrefix("http://"), !value.contains(" ") {
            return "<a href=\"\(escape(value))\">\(escape(value))</a>"
        }
        if detectors?.contains("PKDataDetectorTypePhoneNumber") == true {
            return "<a href=\"tel:\(escape(value.filter { $0.isNumber || $0 == "+" }))\">\(escape(value))</a>"
        }
        return escape(value).replacingOccurrences(of: "\n", with: "<br>")
    }

    // MARK: - Details

    func details() -> String {
        var html = "<section class=\"details\"><h2>Relevance, dates and locations</h2><ul>"
        var any = false
        for key in ["relevantDate", "expirationDate"] {
            if let date = json[key]?.stringValue {
                html += "<li><b>\(key)</b>: \(escape(date))</li>"
                any = true
            }
        }
        for (index, entry) in (json["relevantDates"]?.arrayValue ?? []).enumerated() {
            let text = ["date", "startDate", "endDate"].compactMap { key in
                entry[key]?.stringValue.map { "\(key) \($0)" }
            }.joined(separator: ", ")
            html += "<li><b>relevantDates[\(index)]</b>: \(escape(text))</li>"
            any = true
        }
        if json["voided"]?.boolValue == true {
            html += "<li><b>voided</b>: the pass shows as void</li>"
            any = true
        }
        for (index, location) in (json["locations"]?.arrayValue ?? []).enumerated() {
            let latitude = location["latitude"]?.numberValue.map { String($0) } ?? "?"
            let longitude = location["longitude"]?.numberValue.map { String($0) } ?? "?"
            let text = location["relevantText"]?.stringValue.map { " — “\(escape($0))”" } ?? ""
            html +=
                "<li><b>locations[\(index)]</b>: <a "
                + "href=\"https://www.openstreetmap.org/?mlat=\(latitude)&amp;mlon=\(longitude)#map=16/\(latitude)/\(longitude)\">\(latitude), "
                + "\(longitude)</a>\(text)</li>"
            any = true
        }
        for (index, beacon) in (json["beacons"]?.arrayValue ?? []).enumerated() {
            html += "<li><b>beacons[\(index)]</b>: \(escape(beacon["proximityUUID"]?.stringValue ?? ""))</li>"
            any = true
        }
        if !any { html += "<li>none: the pass is not shown on the lock screen by time or place</li>" }
        html += "</ul>"
        for (index, barcode) in ((json["barcodes"]?.arrayValue ?? []) + [json["barcode"]].compactMap { $0 })
            .enumerated()
        {
            html +=
                "<p class=\"barcode-message\">barcode \(index + 1): "
                + "\(escape(barcode["format"]?.stringValue ?? "")), message "
                + "<code>\(escape(barcode["message"]?.stringValue ?? ""))</code></p>"
        }
        html += "<h2>Warnings</h2>"
        if pass.warnings.isEmpty {
            html += "<p class=\"no-warnings\">none</p>"
        } else {
            html += "<ul class=\"warnings\">"
            for warning in pass.warnings { html += "<li><code>\(escape(warning.description))</code></li>" }
            html += "</ul>"
        }
        html += "</section>"
        return html
    }

    // MARK: - Pieces

    func fieldList(_ styleObject: JSONValue, _ area: FieldArea) -> [JSONValue] {
        styleObject[area.key]?.arrayValue ?? []
    }

    func fields(_ styleObject: JSONValue, _ area: FieldArea, _ f: FieldFormatter, area name: String? = nil) -> String {
        fieldList(styleObject, area).map { field($0, f, area: name ?? String(area.key.dropLast("Fields".count))) }
            .joined()
    }

    func field(_ entry: JSONValue, _ f: FieldFormatter, area: String, alignRight: Bool = false) -> String {
        let alignment: String
        switch entry["textAlignment"]?.stringValue {
        case "PKTextAlignmentRight": alignment = "right"
        case "PKTextAlignmentCenter": alignment = "center"
        case "PKTextAlignmentLeft": alignment = "left"
        default: alignment = alignRight ? "right" : "natural"
        }
        let label = entry["label"]?.stringValue.map { "<div class=\"label\">\(escape(f.localized($0)))</div>" } ?? ""
        return "<div class=\"field \(area) align-\(alignment)\" "
            + "data-key=\"\(escape(entry["key"]?.stringValue ?? ""))\">\(label)<div "
            + "class=\"value\">\(escape(f.value(of: entry)))</div></div>"
    }

    func color(_ key: String) -> String? {
        json[key]?.stringValue.flatMap(RGBColor.init(parsing:)).map { "rgb(\($0.red), \($0.green), \($0.blue))" }
    }

    /// The image as a data URL: the language's own first, then the pass's; @2x preferred (a browser shows CSS pixels
    /// at 2x on most screens).
    func image(_ base: String, language: String) -> String? {
        let names = ["\(base)@2x.png", "\(base).png", "\(base)@3x.png"]
        return PreviewHTML.imageDataURL(in: pass.files, candidates: names.map { "\(language).lproj/\($0)" } + names)
    }

    func transitSymbol(_ type: String?) -> String {
        switch type {
        case "PKTransitTypeAir": "✈"
        case "PKTransitTypeTrain": "🚆"
        case "PKTransitTypeBus": "🚌"
        case "PKTransitTypeBoat": "⛴"
        default: "→"
        }
    }
}

func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}

/// JSON inside a <script> element: every `<` as `\u003c` (JSON has `<`
/// only inside strings, where the escape means the same). Escaping `</`
/// alone is not enough: in script data, `<!--` followed by `<script`
/// switches the HTML tokenizer to the "script data double escaped" state
/// (WHATWG HTML §13.2.5.20-29), where `</script>` no longer ends the element,
/// and the page's own scripts after it are swallowed as text.
func escapeScript(_ text: String) -> String { text.replacingOccurrences(of: "<", with: "\\u003c") }

extension UnsignedPass {
    /// The pass.json value of `authenticationToken`, when it has one.
    var authenticationToken: String? {
        guard let token = passJSON["authenticationToken"]?.stringValue, !token.isEmpty else { return nil }
        return token
    }

    /// The pass as its preview pages show it: its authenticationToken (with
    /// which anyone can fetch, register and unregister the pass) masked in
    /// every string of pass.json, the token's own value and any field or
    /// barcode built from it. Pages are served to whatever reaches the
    /// --watch server, and shared as files.
    func maskingAuthenticationToken() -> UnsignedPass {
        guard let token = authenticationToken else { return self }
        var masked = self
        masked.passJSON = Self.replacing(token, with: Self.mask(token: token), in: passJSON)
        return masked
    }

    /// The first 4 characters and `…` (only `…` for a token too short to be one: 16 characters is Apple's minimum).
    static func mask(token: String) -> String { token.count >= 16 ? String(token.prefix(4)) + "…" : "…" }

    private static func replacing(_ secret: String, with mask: String, in value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): return .string(text.replacingOccurrences(of: secret, with: mask))
        case .array(let items): return .array(items.map { replacing(secret, with: mask, in: $0) })
        case .object(let object):
            return .object(JSONObject(object.map { ($0.key, replacing(secret, with: mask, in: $0.value)) }))
        case .null, .bool, .int, .double: return value
        }
    }
}
