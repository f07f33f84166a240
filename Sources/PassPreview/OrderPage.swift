import Barcodes
package import Foundation
package import PassContent
import PassModel
package import PassRender

/// One order's preview page, laid out as Wallet's order details (Apple's
/// Human Interface Guidelines, Wallet › Order tracking): the merchant with
/// its logo, the status and its description, each fulfillment (shipping:
/// carrier, tracking, estimated delivery; pickup: place, window, barcode),
/// the line items with their images, the payment with its summary and
/// total, the returns, the order number and the link to manage the order; in every
/// language of its order.strings. Self-contained, like a pass's page.
package struct OrderPage: Sendable {
    /// With its authenticationToken masked (`maskingAuthenticationToken`).
    package let order: UnsignedPass
    /// The real token, which no page shows.
    private let hiddenToken: String?
    package var projectErrors: [ContentDiagnostic] = []
    package var liveReload = false
    package var deviceTimeZone: TimeZone = .current
    /// The order's landing page, relative to this page (`../_landing/<capability>.html`), when the build made one.
    package var landingPage: String?

    package init(
        order: UnsignedPass, projectErrors: [ContentDiagnostic] = [], liveReload: Bool = false,
        landingPage: String? = nil
    ) {
        self.landingPage = landingPage
        self.order = order.maskingAuthenticationToken()
        hiddenToken = order.authenticationToken
        self.projectErrors = projectErrors
        self.liveReload = liveReload
    }

    var json: JSONValue { order.passJSON }

    var languages: [(language: String, strings: [String: String])] {
        PreviewLanguages.tables(
            of: order.files.map { ($0.name, $0.bytes) }, stringsFile: WalletItemKind.order.stringsFile)
    }

    /// The number the customer sees, else the identifier.
    var title: String { json["orderNumber"]?.stringValue.map { "Order \($0)" } ?? order.serialNumber }

    package func html() -> String {
        let languages = languages
        var header = "<a href=\"../index.html\">← gallery</a> <h1>\(escape(title))</h1>"
        header +=
            "<span class=\"meta\">order · template <b>\(escape(order.templateName))</b> · "
            + "\(escape(order.passTypeIdentifier)) · \(escape(order.serialNumber)) · "
            + "<code>\(escape(order.sourceFile))</code></span>"
        if let landingPage { header += " <a class=\"landing\" href=\"\(escape(landingPage))\">landing page</a>" }
        return PreviewHTML.itemPage(
            title: "\(title) · \(json["merchant"]?["displayName"]?.stringValue ?? order.templateName)", header: header,
            languages: languages, deviceTimeZone: deviceTimeZone, errors: projectErrors,
            section: details, trailer: notes(),
            data: [("order-strings", PreviewHTML.stringTables(languages)), ("order-json", json)],
            hiddenToken: hiddenToken, liveReload: liveReload)
    }

    // MARK: - The order

    func details(_ f: FieldFormatter) -> String {
        let merchant = json["merchant"]
        let fulfillments = json["fulfillments"]?.arrayValue ?? []
        let status = json["status"]?.stringValue
        var html = "<div class=\"order\">"
        // Merchant and status: the top of Wallet's order details.
        html += "<div class=\"order-merchant\">"
        if let logo = merchant?["logo"]?.stringValue.flatMap({ image(named: $0, language: f.language) }) {
            html += "<img class=\"merchant-logo\" alt=\"logo\" src=\"\(logo)\">"
        }
        html += "<span class=\"merchant-name\">\(text(merchant?["displayName"], f))</span></div>"
        let headline = OrderStatusWords.headline(
            orderStatus: status, firstFulfillmentStatus: fulfillments.first?["status"]?.stringValue)
        html +=
            "<div class=\"order-status\" "
            + "data-status=\"\(escape(status ?? ""))\"><div "
            + "class=\"status-word\">\(escape(headline))</div>"
        if let description = json["statusDescription"]?.stringValue {
            html += "<div class=\"status-description\">\(escape(f.localized(description)))</div>"
        }
        html += "</div>"
        html += "<dl class=\"order-facts\">"
        if let number = json["orderNumber"]?.stringValue { html += fact("Order number", escape(number)) }
        if let created = json["createdAt"]?.stringValue {
            html += fact("Ordered", escape(f.dateTime(created) ?? created))
        }
        if let updated = json["updatedAt"]?.stringValue {
            html += fact("Updated", escape(f.dateTime(updated) ?? updated))
        }
        html += fact("Status", "<code>\(escape(status ?? ""))</code>")
        html += "</dl>"
        if let url = json["orderManagementURL"]?.stringValue {
            html += "<p class=\"manage\">\(link(url, "Manage Order"))</p>"
        }

        for (index, fulfillment) in fulfillments.enumerated() {
            html += self.fulfillment(fulfillment, index: index, f)
        }
        let items = json["lineItems"]?.arrayValue ?? []
        if !items.isEmpty {
            html += "<section class=\"line-items\"><h2>Items</h2>\(lineItems(items, f))</section>"
        }
        if let payment = json["payment"] { html += self.payment(payment, f) }
        html += contact(merchant, f)
        if let returnInfo = json["returnInfo"] {
            html += "<section class=\"returns\"><h2>Returns</h2><dl>"
            if let policy = returnInfo["returnPolicyDescription"]?.stringValue {
                html += fact("Policy", escape(f.localized(policy)))
            }
            if let deadline = returnInfo["returnDeadline"]?.stringValue {
                html += fact("Return by", escape(f.dateTime(deadline) ?? deadline))
            }
            if let url = returnInfo["returnPolicyURL"]?.stringValue { html += fact("Return policy", link(url, url)) }
            html += "</dl></section>"
        }
        for orderReturn in json["returns"]?.arrayValue ?? [] { html += self.orderReturn(orderReturn, f) }
        html += "</div>"
        return html
    }

    /// A return (iOS 17.2+): its status as Wallet words it, its dates, carrier, label, items and link.
    func orderReturn(_ orderReturn: JSONValue, _ f: FieldFormatter) -> String {
        let status = orderReturn["status"]?.stringValue ?? ""
        let number = orderReturn["returnNumber"]?.stringValue.map { " \(escape($0))" } ?? ""
        var html = "<section class=\"return\" data-status=\"\(escape(status))\"><h2>Return\(number)</h2>"
        html += "<div class=\"status-word\">\(escape(OrderStatusWords.orderReturn[status] ?? status))</div>"
        if let description = orderReturn["statusDescription"]?.stringValue {
            html += "<div class=\"status-description\">\(escape(f.localized(description)))</div>"
        }
        html += "<dl>"
        for (key, term) in [("initiatedAt", "Started"), ("dropOffBy", "Drop off by"), ("returnedAt", "Returned")] {
            if let date = orderReturn[key]?.stringValue { html += fact(term, escape(f.dateTime(date) ?? date)) }
        }
        if let carrier = orderReturn["carrier"]?.stringValue { html += fact("Carrier", escape(f.localized(carrier))) }
        if let label = orderReturn["returnLabel"]?.stringValue {
            html += fact("Return label", "<code>\(escape(label))</code>")
        }
        if let url = orderReturn["returnManagementURL"]?.stringValue {
            html += fact("Manage", link(url, "Manage Return"))
        }
        if let notes = orderReturn["notes"]?.stringValue {
            html += fact("Notes", escape(f.localized(notes)).replacingOccurrences(of: "\n", with: "<br>"))
        }
        html += "</dl>"
        if let items = orderReturn["lineItems"]?.arrayValue, !items.isEmpty {
            html += "<h3>In this return</h3>\(lineItems(items, f))"
        }
        return html + "</section>"
    }

    func fulfillment(_ fulfillment: JSONValue, index: Int, _ f: FieldFormatter) -> String {
        let type = fulfillment["fulfillmentType"]?.stringValue ?? ""
        let status = fulfillment["status"]?.stringValue ?? ""
        let kind = type == "pickup" ? "pickup" : "shipping"
        var html = "<section class=\"fulfillment \(kind)\" data-status=\"\(escape(status))\">"
        if type == "pickup" {
            html += "<h2>Pickup · \(text(fulfillment["displayName"], f))</h2>"
        } else {
            // HIG: without a carrier, Wallet shows its default "Track Shipment".
            let carrier = fulfillment["carrier"]?.stringValue.map { escape(f.localized($0)) } ?? "Track Shipment"
            html +=
                "<h2>\(fulfillment["shippingType"]?.stringValue == "delivery" ? "Delivery" : "Shipment") "
                + "· \(carrier)</h2>"
        }
        html += "<div class=\"status-word\">\(escape(OrderStatusWords.fulfillment[status] ?? status))</div>"
        if let description = fulfillment["statusDescription"]?.stringValue {
            html += "<div class=\"status-description\">\(escape(f.localized(description)))</div>"
        }
        html += "<dl>"
        html += type == "pickup" ? pickupFacts(fulfillment, f) : shippingFacts(fulfillment, f)
        if let notes = fulfillment["notes"]?.stringValue {
            html += fact("Notes", escape(f.localized(notes)).replacingOccurrences(of: "\n", with: "<br>"))
        }
        html += "</dl>"
        if type == "pickup", let barcode = fulfillment["barcode"] { html += pickupBarcode(barcode, f) }
        if let items = fulfillment["lineItems"]?.arrayValue, !items.isEmpty {
            html += "<h3>In this \(type == "pickup" ? "pickup" : "shipment")</h3>\(lineItems(items, f))"
        }
        html += "</section>"
        return html
    }

    /// A pickup's facts: its window, when it was picked up, its address and place on a map.
    func pickupFacts(_ fulfillment: JSONValue, _ f: FieldFormatter) -> String {
        var html = ""
        if let start = fulfillment["pickupAt"]?.stringValue {
            let window = f.window(from: start, duration: fulfillment["pickupWindowDuration"]?.stringValue)
            html += fact("Pickup window", escape(window ?? start))
        }
        if let picked = fulfillment["pickedUpAt"]?.stringValue {
            html += fact("Picked up", escape(f.dateTime(picked) ?? picked))
        }
        if let address = fulfillment["address"] { html += fact("Address", self.address(address, f)) }
        if let location = fulfillment["location"], let latitude = location["latitude"]?.numberValue,
            let longitude = location["longitude"]?.numberValue
        {
            let map =
                "https://www.openstreetmap.org/?mlat=\(latitude)&amp;mlon=\(longitude)#map=16/\(latitude)/\(longitude)"
            html += fact("Map", "<a href=\"\(map)\">\(latitude), \(longitude)</a>")
        }
        return html
    }

    /// A shipment's facts: tracking, the estimated delivery, when it shipped and arrived, its recipient.
    func shippingFacts(_ fulfillment: JSONValue, _ f: FieldFormatter) -> String {
        var html = ""
        if let number = fulfillment["trackingNumber"]?.stringValue { html += fact("Tracking number", escape(number)) }
        if let url = fulfillment["trackingURL"]?.stringValue { html += fact("Track", link(url, url)) }
        if let estimate = fulfillment["estimatedDeliveryAt"]?.stringValue {
            let window = fulfillment["estimatedDeliveryWindowDuration"]?.stringValue
            let shown = window == nil ? f.day(estimate) : f.window(from: estimate, duration: window)
            html += fact("Estimated delivery", escape(shown ?? estimate))
        }
        if let shipped = fulfillment["shippedAt"]?.stringValue {
            html += fact("Shipped", escape(f.dateTime(shipped) ?? shipped))
        }
        if let delivered = fulfillment["deliveredAt"]?.stringValue {
            html += fact("Delivered", escape(f.dateTime(delivered) ?? delivered))
        }
        if let recipient = fulfillment["recipient"] {
            var lines = [name(recipient)].compactMap { $0 }.map(escape)
            if let address = recipient["address"] { lines.append(self.address(address, f)) }
            if !lines.isEmpty { html += fact("Recipient", lines.joined(separator: "<br>")) }
        }
        return html
    }

    /// A pickup's barcode, drawn; a note when its format is not one of Apple's.
    func pickupBarcode(_ barcode: JSONValue, _ f: FieldFormatter) -> String {
        guard let message = barcode["message"]?.stringValue else { return "" }
        let name = barcode["format"]?.stringValue ?? ""
        guard let format = Self.barcodeFormats[name] else {
            return "<p class=\"barcode-error\">cannot draw a barcode of format \(escape(name))</p>"
        }
        return PassPage.barcode(
            message, format: format,
            messageEncoding: barcode["messageEncoding"]?.stringValue ?? "iso-8859-1",
            altText: barcode["altText"]?.stringValue.map(f.localized))
    }

    /// Apple's order Barcode.format values and the symbologies that draw them.
    static let barcodeFormats: [String: BarcodeFormat] = [
        "qr": .qr, "pdf417": .pdf417, "aztec": .aztec, "code128": .code128,
    ]

    func lineItems(_ items: [JSONValue], _ f: FieldFormatter) -> String {
        var html = "<ul class=\"items\">"
        for item in items {
            html += "<li class=\"item\">"
            if let image = item["image"]?.stringValue.flatMap({ self.image(named: $0, language: f.language) }) {
                html += "<img class=\"product\" alt=\"\" src=\"\(image)\">"
            } else {
                html += "<span class=\"product none\"></span>"
            }
            html += "<span class=\"item-text\"><span class=\"item-title\">\(text(item["title"], f))</span>"
            if let subtitle = item["subtitle"]?.stringValue {
                html += "<span class=\"item-subtitle\">\(escape(f.localized(subtitle)))</span>"
            }
            html += "<span class=\"item-quantity\">Qty \(escape(f.quantity(item["quantity"]) ?? "?"))</span></span>"
            if let price = f.money(item["price"]) { html += "<span class=\"item-price\">\(escape(price))</span>" }
            html += "</li>"
        }
        return html + "</ul>"
    }

    func payment(_ payment: JSONValue, _ f: FieldFormatter) -> String {
        var html = "<section class=\"payment\"><h2>Payment</h2><dl class=\"summary\">"
        for item in payment["summaryItems"]?.arrayValue ?? [] {
            html += fact(text(item["label"], f), escape(f.money(item["value"]) ?? ""))
        }
        html += "<div class=\"total\"><dt>Total</dt><dd>\(escape(f.money(payment["total"]) ?? ""))</dd></div>"
        html += "</dl><dl>"
        if let status = payment["status"]?.stringValue { html += fact("Payment status", escape(status)) }
        let methods = (payment["paymentMethods"]?.arrayValue ?? []).compactMap(\.stringValue)
        if !methods.isEmpty {
            html += fact("Paid with", methods.map { escape(f.localized($0)) }.joined(separator: "<br>"))
        }
        for transaction in payment["transactions"]?.arrayValue ?? [] {
            let parts = [
                transaction["transactionType"]?.stringValue, f.money(transaction["amount"]),
                transaction["createdAt"]?.stringValue.map { f.dateTime($0) ?? $0 }, transaction["status"]?.stringValue,
                transaction["paymentMethod"]?["displayName"]?.stringValue.map(f.localized),
            ].compactMap { $0 }
            html += fact("Transaction", escape(parts.joined(separator: " · ")))
        }
        return html + "</dl></section>"
    }

    /// The merchant's contact methods (HIG: people choose one from the Contact button).
    func contact(_ merchant: JSONValue?, _ f: FieldFormatter) -> String {
        guard let merchant else { return "" }
        var html = "<section class=\"contact\"><h2>Contact \(text(merchant["displayName"], f))</h2><dl>"
        if let url = merchant["url"]?.stringValue { html += fact("Website", link(url, url)) }
        if let url = merchant["contactURL"]?.stringValue { html += fact("Support", link(url, url)) }
        if let url = merchant["businessChatURL"]?.stringValue { html += fact("Messages", link(url, url)) }
        if let email = merchant["emailAddress"]?.stringValue {
            html += fact("Email", "<a href=\"mailto:\(escape(email))\">\(escape(email))</a>")
        }
        if let phone = merchant["phoneNumber"]?.stringValue {
            html += fact(
                "Phone",
                "<a href=\"tel:\(escape(phone.filter { $0.isASCII && ($0.isNumber || $0 == "+") }))\">\(escape(phone))</a>"
            )
        }
        if let address = merchant["address"] { html += fact("Address", self.address(address, f)) }
        if let customer = json["customer"], let name = name(customer) ?? customer["emailAddress"]?.stringValue {
            html += fact("Customer", escape(name))
        }
        return html + "</dl></section>"
    }

    /// Identifiers, the time stamps the build sets, and the warnings.
    func notes() -> String {
        var html = "<section class=\"details\"><h2>Identifiers</h2><ul>"
        html +=
            "<li><b>orderTypeIdentifier</b>: "
            + "\(escape(order.passTypeIdentifier))</li><li><b>orderIdentifier</b>: "
            + "\(escape(order.serialNumber))</li>"
        if json["updatedAt"] == nil {
            html += "<li><b>updatedAt</b>: set by <code>passforge build</code> when the order changes</li>"
        }
        html += "</ul><h2>Warnings</h2>"
        if order.warnings.isEmpty {
            html += "<p class=\"no-warnings\">none</p>"
        } else {
            html += "<ul class=\"warnings\">"
            for warning in order.warnings { html += "<li><code>\(escape(warning.description))</code></li>" }
            html += "</ul>"
        }
        return html + "</section>"
    }

    // MARK: - Pieces

    func fact(_ term: String, _ html: String) -> String { "<div><dt>\(term)</dt><dd>\(html)</dd></div>" }

    /// A string value, localized and escaped ("" when absent or not a string).
    func text(_ value: JSONValue?, _ f: FieldFormatter) -> String { escape(value?.stringValue.map(f.localized) ?? "") }

    /// A link only for http(s): an order's URLs may hold any scheme (`javascript:` too), which a page must not follow.
    func link(_ url: String, _ label: String) -> String {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else {
            return "<code>\(escape(url))</code>"
        }
        return "<a href=\"\(escape(url))\">\(escape(label))</a>"
    }

    func name(_ person: JSONValue) -> String? {
        let parts = [person["givenName"]?.stringValue, person["familyName"]?.stringValue].compactMap { $0 }
        return parts.isEmpty ? person["organizationName"]?.stringValue : parts.joined(separator: " ")
    }

    func address(_ address: JSONValue, _ f: FieldFormatter) -> String {
        var lines = (address["addressLines"]?.arrayValue ?? []).compactMap(\.stringValue)
        let town = [address["postalCode"]?.stringValue, address["locality"]?.stringValue].compactMap { $0 }.joined(
            separator: " ")
        if !town.isEmpty { lines.append(town) }
        for key in ["subLocality", "subAdministrativeArea", "administrativeArea"] {
            if let part = address[key]?.stringValue { lines.append(part) }
        }
        if let country = address["countryCode"]?.stringValue {
            lines.append(f.locale.localizedString(forRegionCode: country) ?? country)
        }
        return lines.map(escape).joined(separator: "<br>")
    }

    /// An order image by its name (`"logo"` or `"logo.png"`) as a data URL. A top-level image wins over the
    /// language's copy (Apple, "Creating the source for an order"); @2x is preferred, as for passes.
    func image(named name: String, language: String) -> String? {
        let lowered = name.lowercased()
        let stem =
            [".png", ".jpg", ".jpeg"].first { lowered.hasSuffix($0) }.map { String(name.dropLast($0.count)) } ?? name
        let candidates = ["", "\(language).lproj/"].flatMap { folder in
            ["@2x", "", "@3x"].flatMap { scale in ["png", "jpg", "jpeg"].map { "\(folder)\(stem)\(scale).\($0)" } }
        }
        return PreviewHTML.imageDataURL(in: order.files, candidates: candidates)
    }
}
