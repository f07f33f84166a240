import Foundation
import PassContent
import PassModel
import PassRender

/// The frame of every preview page: styles, the error panel, live reload.
enum PreviewHTML {
    /// The first of `candidates` (file names, in order of preference) that `files` holds, as a data URL
    /// (PNG, or JPEG for .jpg/.jpeg), so that a page shows its images from file:// too.
    static func imageDataURL(in files: [PackageFile], candidates: [String]) -> String? {
        for name in candidates {
            guard let file = files.first(where: { $0.name == name }) else { continue }
            let type = name.lowercased().hasSuffix(".png") ? "image/png" : "image/jpeg"
            return "data:\(type);base64,\(Data(file.bytes).base64EncodedString())"
        }
        return nil
    }

    static func document(title: String, body: String, liveReload: Bool, script: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <link rel="icon" href="data:,">
        <title>\(escape(title))</title>
        <style>\(css)</style>
        </head><body>
        \(body)
        <script>\(script)\(liveReload ? reloadScript : "")</script>
        </body></html>

        """
    }

    /// The --watch server sends `reload` with the changed pages (or `*`) as server-sent events.
    static let reloadScript = """

        (() => {
          const here = location.pathname.replace(/^\\//, '') || 'index.html';
          const events = new EventSource('/_passforge/events');
          events.addEventListener('open', () => { document.documentElement.dataset.live = 'connected'; });
          events.addEventListener('reload', (event) => {
            const pages = event.data.split('\\n');
            if (pages.includes('*') || pages.includes(here)) location.reload();
          });
        })();
        """

    /// A pass's or an order's page: `header` (back link, heading, meta) with the language choice, the
    /// project's errors, one section per language drawn by `section` (the first shown, the others hidden
    /// until chosen), `trailer`, then `data` as JSON script elements (the string tables among them, for the
    /// browser checks). The token is masked wherever it is: in a localization, or anywhere else the masked
    /// JSON does not reach.
    static func itemPage(
        title: String, header: String, languages: [(language: String, strings: [String: String])],
        deviceTimeZone: TimeZone, errors: [ContentDiagnostic], section: (FieldFormatter) -> String, trailer: String,
        data: [(id: String, json: JSONValue)], hiddenToken: String?, liveReload: Bool
    ) -> String {
        var body = "<header class=\"top\">\(header)"
        if languages.count > 1 {
            body += " <label>Language <select id=\"language\">"
            for (index, table) in languages.enumerated() {
                body +=
                    "<option "
                    + "value=\"\(escape(table.language))\"\(index == 0 ? " selected" : "")>\(escape(table.language))</option>"
            }
            body += "</select></label>"
        }
        body += "</header>"
        body += errorPanel(errors)
        for (index, table) in languages.enumerated() {
            let formatter = FieldFormatter(
                language: table.language, strings: table.strings, deviceTimeZone: deviceTimeZone)
            body += "<section class=\"language\" data-lang=\"\(escape(table.language))\"\(index == 0 ? "" : " hidden")>"
            body += "<div class=\"sides\">\(section(formatter))</div></section>"
        }
        body += trailer
        for (id, json) in data {
            body +=
                "<script type=\"application/json\" "
                + "id=\"\(id)\">\(escapeScript(String(decoding: json.serialized(pretty: id.hasSuffix("-json")), as: UTF8.self)))</script>"
        }
        let page = document(title: title, body: body, liveReload: liveReload, script: languageScript)
        return hiddenToken.map { page.replacingOccurrences(of: $0, with: UnsignedPass.mask(token: $0)) } ?? page
    }

    /// The string tables of `languages` as one JSON object: language → key → text.
    static func stringTables(_ languages: [(language: String, strings: [String: String])]) -> JSONValue {
        .object(
            JSONObject(
                languages.map {
                    (
                        $0.language,
                        JSONValue.object(
                            JSONObject($0.strings.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
                    )
                }))
    }

    static let languageScript = """
        const select = document.getElementById('language');
        if (select) select.addEventListener('change', () => {
          for (const section of document.querySelectorAll('section.language')) section.hidden = section.dataset.lang !== select.value;
        });
        """

    static func errorPanel(_ errors: [ContentDiagnostic]) -> String {
        guard !errors.isEmpty else { return "" }
        var html =
            "<section id=\"errors\" class=\"errors\"><h2>The build would fail: "
            + "\(errors.filter(\.isError).count) "
            + "error\(errors.filter(\.isError).count == 1 ? "" : "s")</h2><pre>"
        html += errors.map { escape($0.description) }.joined(separator: "\n")
        html += "</pre><p>This page shows the last version that built.</p></section>"
        return html
    }

    static let css = """
        body { font: 15px/1.35 -apple-system, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; margin: 0; background: #e9e9ee; color: #1d1d1f; }
        header.top { padding: 12px 20px; background: #fff; border-bottom: 1px solid #ccc; display: flex; gap: 14px; align-items: baseline; flex-wrap: wrap; }
        header.top h1 { font-size: 20px; margin: 0; }
        .meta { color: #555; font-size: 13px; }
        .errors { margin: 16px 20px; padding: 8px 16px; background: #fff0f0; border: 2px solid #d00; border-radius: 8px; }
        .errors pre { white-space: pre-wrap; font-size: 13px; }
        .sides { display: flex; gap: 28px; padding: 20px; flex-wrap: wrap; align-items: flex-start; }
        .pass { width: 375px; border-radius: 14px; box-shadow: 0 2px 12px rgba(0,0,0,.25); overflow: hidden; position: relative; }
        .front { background: var(--bg); color: var(--fg); padding: 12px 14px 16px; }
        .front .label { color: var(--label); font-size: 11px; font-weight: 600; letter-spacing: .02em; }
        .front .value { font-size: 16px; }
        .front .primary .value { font-size: 30px; font-weight: 300; }
        .front .boarding .primary .value { font-size: 40px; }
        .background-image { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: cover; filter: blur(6px); opacity: .6; z-index: 0; }
        .background-image.artwork { filter: none; opacity: 1; }
        .front > *:not(.background-image) { position: relative; z-index: 1; }
        .row { display: flex; gap: 12px; margin: 8px 0; align-items: flex-start; }
        .row .field { flex: 1 1 0; min-width: 0; }
        .row:has(> .field:nth-child(4)) .value { font-size: 14px; }
        .top-row { align-items: center; }
        .top-row .field { flex: 0 0 auto; text-align: right; }
        .logo { max-height: 50px; max-width: 160px; }
        .logo-text { font-size: 17px; font-weight: 600; }
        .spacer { flex: 1; }
        .align-right { text-align: right; } .align-center { text-align: center; }
        .transit { font-size: 28px; align-self: center; }
        .strip { background-size: cover; background-position: center; min-height: 110px; margin: 8px -14px; padding: 10px 14px; }
        .thumbnail { max-width: 90px; max-height: 90px; border-radius: 6px; }
        .primary-with-thumbnail .column { flex: 1; }
        .footer-image { display: block; margin: 8px auto; max-width: 100%; }
        .secondary-logo { max-height: 30px; display: block; margin: 6px auto; }
        .barcode { margin: 14px auto 0; background: #fff; color: #000; border-radius: 8px; padding: 10px; width: fit-content; text-align: center; }
        .barcode-image svg { width: 100%; height: 100%; display: block; }
        .alt-text { font-size: 12px; margin-top: 4px; }
        .barcode-error { color: #b00; max-width: 300px; }
        .back { background: #fff; padding: 6px 16px 12px; }
        .back h2 { font-size: 14px; color: #666; }
        .back dt { font-size: 12px; color: #666; margin-top: 10px; }
        .back dd { margin: 2px 0 0; white-space: pre-wrap; }
        .details { padding: 0 20px 20px; }
        .details h2 { font-size: 16px; }
        .warnings code { white-space: pre-wrap; }
        .gallery { padding: 10px 20px; }
        .gallery h2 { margin: 18px 0 8px; }
        .cards { display: flex; flex-wrap: wrap; gap: 14px; }
        .card { display: block; width: 220px; border-radius: 10px; padding: 10px; color: inherit; text-decoration: none; box-shadow: 0 1px 6px rgba(0,0,0,.25); }
        .card img { max-height: 28px; max-width: 100px; vertical-align: middle; }
        .card .primary-value { font-size: 22px; font-weight: 300; margin-top: 8px; }
        .card .serial { font-size: 11px; opacity: .8; }
        .order-card { background: #fff; color: #1d1d1f; }
        .order-card .order-total { font-size: 14px; }
        .order { width: 390px; background: #fff; border-radius: 14px; box-shadow: 0 2px 12px rgba(0,0,0,.25); padding: 14px 16px 18px; }
        .order h2 { font-size: 15px; margin: 18px 0 6px; }
        .order h3 { font-size: 13px; color: #666; margin: 10px 0 4px; }
        .order dl { margin: 6px 0; }
        .order dt { font-size: 12px; color: #666; margin-top: 8px; }
        .order dd { margin: 2px 0 0; overflow-wrap: anywhere; }
        .order section { border-top: 1px solid #e3e3e8; margin-top: 12px; }
        .order-merchant { display: flex; gap: 10px; align-items: center; }
        .merchant-logo { width: 44px; height: 44px; border-radius: 10px; object-fit: cover; }
        .merchant-name { font-size: 17px; font-weight: 600; }
        .order-status { margin-top: 12px; }
        .status-word { font-size: 24px; font-weight: 600; }
        .fulfillment .status-word { font-size: 18px; }
        .status-description { color: #444; margin-top: 2px; }
        .manage a { font-weight: 600; }
        .items { list-style: none; padding: 0; margin: 4px 0; }
        .item { display: flex; gap: 10px; align-items: center; padding: 6px 0; }
        .product { width: 56px; height: 56px; border-radius: 8px; object-fit: cover; flex: 0 0 auto; background: #f2f2f5; }
        .item-text { flex: 1; display: flex; flex-direction: column; min-width: 0; }
        .item-title { font-weight: 600; }
        .item-subtitle, .item-quantity { font-size: 13px; color: #555; }
        .item-price { font-variant-numeric: tabular-nums; }
        .summary > div { display: flex; justify-content: space-between; align-items: baseline; }
        .summary dd { font-variant-numeric: tabular-nums; }
        .summary .total { font-weight: 700; font-size: 17px; border-top: 1px solid #e3e3e8; margin-top: 6px; }
        .summary .total dt { color: inherit; font-size: inherit; }
        """
}
