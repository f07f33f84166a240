import Foundation
import PassBuild
import PassContent
import PassModel
import PassPreview
import PassRender
import TestSupport
import Testing

/// An order as the unsigned render hands it to the preview, with order.json given as text.
func unsignedOrder(_ json: String, files: [PackageFile] = [], identifier: String = "SO-1") throws -> UnsignedPass {
    UnsignedPass(
        passTypeIdentifier: "order.com.example.shop", serialNumber: identifier, templateName: "shop-order",
        sourceFile: "content/orders/\(identifier).yml", passJSON: try JSONValue(parsing: json), files: files,
        warnings: [], kind: .order)
}

@Suite("passforge preview of orders")
struct OrderPreviewTests {
    static let lamp = PNGFactory.png(width: 300, height: 300, rgb: (210, 160, 40))
    static let logo = PNGFactory.png(width: 300, height: 300, rgb: (20, 80, 60))
    static let token = "abcdefghijklmnopqrstuvwxyz012345"

    /// A shipped order whose strings are written to break out of the page: every one must show as text.
    static let hostileShipping = """
        {
          "schemaVersion": 1, "orderTypeIdentifier": "order.com.example.shop", "orderIdentifier": "SO-1", "orderType": "ecommerce",
          "orderNumber": "1042<b>bold</b>",
          "orderManagementURL": "javascript:alert('manage')",
          "status": "open", "statusDescription": "On its way <script>alert('status')</script>",
          "createdAt": "2026-11-20T14:05:00+01:00",
          "webServiceURL": "https://orders.example.com/", "authenticationToken": "\(token)",
          "merchant": { "displayName": "Northwind \\"Home\\" & <i>Co</i>", "merchantIdentifier": "merchant.com.example", "url": "https://shop.example.com/", "logo": "logo" },
          "lineItems": [
            { "title": "Lamp\\"><img src=x onerror=alert(1)>", "subtitle": "Warm white", "quantity": 2, "image": "lamp",
              "price": { "amount": "94.50", "currency": "EUR" } }
          ],
          "fulfillments": [
            { "fulfillmentType": "shipping", "fulfillmentIdentifier": "parcel-1", "status": "onTheWay", "carrier": "PostNord",
              "trackingNumber": "00370712345678901234", "trackingURL": "https://track.example.com/?id=1&x=\\"><script>alert(2)</script>",
              "estimatedDeliveryAt": "2026-11-27T00:00:00+01:00", "notes": "Leave at the door </script><!--<script>" }
          ],
          "payment": {
            "status": "paid",
            "summaryItems": [ { "label": "Shipping", "value": { "amount": "0.00", "currency": "EUR" } } ],
            "total": { "amount": "189.00", "currency": "EUR" }
          }
        }
        """

    static let pickup = """
        {
          "schemaVersion": 1, "orderTypeIdentifier": "order.com.example.shop", "orderIdentifier": "PO-1", "orderType": "ecommerce",
          "orderNumber": "311", "orderManagementURL": "https://shop.example.com/orders/PO-1",
          "status": "open", "createdAt": "2026-11-24T09:12:00+01:00",
          "merchant": { "displayName": "Northwind Home", "merchantIdentifier": "merchant.com.example", "url": "https://shop.example.com/" },
          "lineItems": [ { "title": "MUG_TITLE", "quantity": 1, "price": { "amount": "249.00", "currency": "NOK" } } ],
          "fulfillments": [
            { "fulfillmentType": "pickup", "fulfillmentIdentifier": "desk", "displayName": "Harbour Street", "status": "readyForPickup",
              "pickupAt": "2026-11-26T10:00:00+01:00", "pickupWindowDuration": "PT4H",
              "address": { "addressLines": ["Harbour Street 12"], "locality": "Bergen", "postalCode": "5003" },
              "barcode": { "format": "qr", "message": "PO-1", "messageEncoding": "iso-8859-1", "altText": "311" } }
          ],
          "payment": { "status": "paid", "total": { "amount": "249.00", "currency": "NOK" } }
        }
        """

    @Test(
        "an order's page: merchant, status, the shipping fulfillment, line items with their image, total; hostile strings are text; no token"
    )
    func shippingOrderPage() throws {
        let order = try unsignedOrder(
            Self.hostileShipping,
            files: [
                PackageFile(name: "lamp@2x.png", bytes: Self.lamp, source: "templates/shop-order/lamp@2x.png"),
                PackageFile(name: "logo.png", bytes: Self.logo, source: "templates/shop-order/logo.png"),
            ])
        var page = OrderPage(order: order)
        page.deviceTimeZone = TimeZone(identifier: "UTC")!
        let html = page.html()

        // Status, as Wallet words it, and its description.
        #expect(html.contains("<div class=\"status-word\">On the Way</div>"), "\(html)")
        #expect(html.contains("On its way &lt;script&gt;alert(&#39;status&#39;)&lt;/script&gt;"))
        // The fulfillment: carrier, tracking number and link, the day of the estimated delivery in its own zone.
        #expect(html.contains("Shipment · PostNord"))
        #expect(html.contains("00370712345678901234"))
        #expect(
            html.contains(
                "<a href=\"https://track.example.com/?id=1&amp;x=&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;\">"))
        #expect(html.contains("Nov 27, 2026"), "estimated delivery")
        #expect(html.contains("Nov 20, 2026"), "createdAt")
        // The line item with its image, quantity and price; the summary and the total.
        #expect(
            html.contains(
                "<img class=\"product\" alt=\"\" src=\"data:image/png;base64,\(Data(Self.lamp).base64EncodedString())\">"
            ))
        #expect(
            html.contains(
                "<img class=\"merchant-logo\" alt=\"logo\" src=\"data:image/png;base64,\(Data(Self.logo).base64EncodedString())\">"
            ))
        #expect(html.contains("Lamp&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("Qty 2"))
        #expect(html.contains("€94.50"))
        #expect(html.contains("<div><dt>Shipping</dt><dd>€0.00</dd></div>"))
        #expect(html.contains("<div class=\"total\"><dt>Total</dt><dd>€189.00</dd></div>"))
        #expect(html.contains("1042&lt;b&gt;bold&lt;/b&gt;"))
        #expect(html.contains("Northwind &quot;Home&quot; &amp; &lt;i&gt;Co&lt;/i&gt;"))
        // No markup from the order: no script but the page's own three (order-strings, order-json, the language switch),
        // no injected tag, no javascript: link.
        #expect(html.components(separatedBy: "<script").count - 1 == 3, "\(html)")
        for injected in ["<img src=x", "<b>bold", "<i>Co", "href=\"javascript:"] {
            #expect(!html.contains(injected), "\(injected)")
        }
        // The URL that is not http(s) is shown, not linked.
        #expect(html.contains("<code>javascript:alert(&#39;manage&#39;)</code>"))
        // The order.json in its script element cannot close it.
        #expect(html.contains(#"Leave at the door \u003c/script>\u003c!--\u003cscript>"#))
        #expect(!html.contains(Self.token) && html.contains("abcd…"))
    }

    @Test(
        "an order's returns: status as Wallet words it, dates, carrier, label, items and link; hostile strings are text"
    )
    func returnsArePreviewed() throws {
        var json = try JSONValue(parsing: Self.pickup).objectValue!
        json["status"] = "completed"
        json["returnInfo"] = try JSONValue(
            parsing:
                #"{"returnPolicyURL": "https://shop.example.com/returns", "returnDeadline": "2026-12-24T00:00:00Z"}"#)
        json["returns"] = try JSONValue(
            parsing: """
                [{ "returnIdentifier": "r1", "returnNumber": "R-7<b>", "status": "onTheWay", "carrier": "PostNord <i>",
                   "initiatedAt": "2026-11-28T10:00:00Z", "dropOffBy": "2026-12-01T18:00:00Z", "returnLabel": "label.pdf",
                   "returnManagementURL": "javascript:alert(1)", "notes": "Box it </script>",
                   "lineItems": [{ "title": "Mug", "quantity": 1, "price": { "amount": "249.00", "currency": "NOK" } }] },
                 { "returnIdentifier": "r2", "status": "completed", "returnManagementURL": "https://shop.example.com/returns/r2" }]
                """)
        var page = OrderPage(order: try unsignedOrder(JSONValue.object(json).serializedString()))
        page.deviceTimeZone = TimeZone(identifier: "UTC")!
        let html = page.html()
        #expect(
            html.contains(
                "<section class=\"return\" data-status=\"onTheWay\"><h2>Return R-7&lt;b&gt;</h2><div class=\"status-word\">On the Way</div>"
            ), "\(html)")
        #expect(
            html.contains(
                "<section class=\"return\" data-status=\"completed\"><h2>Return</h2><div class=\"status-word\">Return Completed</div>"
            ))
        #expect(html.contains("<dt>Drop off by</dt>") && html.contains("Dec 1, 2026"))
        #expect(html.contains("PostNord &lt;i&gt;") && html.contains("<code>label.pdf</code>"))
        #expect(html.contains("<h3>In this return</h3>") && html.contains("Mug"))
        #expect(html.contains("<code>javascript:alert(1)</code>") && !html.contains("href=\"javascript:"))
        #expect(html.contains("<a href=\"https://shop.example.com/returns/r2\">Manage Return</a>"))
        #expect(!html.contains("R-7<b>") && !html.contains("PostNord <i>") && !html.contains("Box it </script>"))
    }

    @Test("a pickup order: place, window, a drawn barcode, and its strings in each language of order.strings")
    func pickupOrderPage() throws {
        let order = try unsignedOrder(
            Self.pickup,
            files: [
                PackageFile(
                    name: "en.lproj/order.strings", bytes: Array("\"MUG_TITLE\" = \"Stoneware mug\";".utf8),
                    source: "en"),
                PackageFile(
                    name: "nb.lproj/order.strings", bytes: Array("\"MUG_TITLE\" = \"Steintøykrus\";".utf8), source: "nb"
                ),
            ], identifier: "PO-1")
        var page = OrderPage(order: order)
        page.deviceTimeZone = TimeZone(identifier: "UTC")!
        let html = page.html()
        #expect(html.contains("Pickup · Harbour Street"))
        #expect(html.contains("<div class=\"status-word\">Ready for Pickup</div>"))
        // 10:00 at +01:00 is 09:00 UTC; PT4H ends at 13:00 the same day.
        let window = html.replacingOccurrences(of: "\u{202F}", with: " ")
        #expect(window.contains("Nov 26, 2026") && window.contains("9:00 AM – 1:00 PM"), "\(html)")
        #expect(html.contains("Harbour Street 12<br>5003 Bergen"))
        #expect(html.contains("data-format=\"PKBarcodeFormatQR\"") && html.contains("<svg"))
        #expect(html.contains("<div class=\"alt-text\">311</div>"))
        #expect(html.contains("<option value=\"en\" selected>en</option><option value=\"nb\">nb</option>"))
        #expect(html.contains("Stoneware mug") && html.contains("Steintøykrus"))
        #expect(html.contains("NOK") && html.contains("249.00"))
        #expect(html.contains("<a href=\"https://shop.example.com/orders/PO-1\">Manage Order</a>"))
    }

    @Test(
        "the gallery holds passes and orders: the order's page under its orderTypeIdentifier, its card in the index; a pass-only index names no order"
    )
    func galleryWithOrders() throws {
        let folder = TemporaryDirectory("passforge-order-gallery")
        let order = try unsignedOrder(Self.pickup, identifier: "PO-1")
        let pass = UnsignedPass(
            passTypeIdentifier: "pass.com.example.shop", serialNumber: "CARD-1", templateName: "card",
            sourceFile: "content/card.yml",
            passJSON: try JSONValue(
                parsing:
                    #"{"description": "Card", "organizationName": "Shop", "storeCard": {"primaryFields": [{"key": "b", "value": "12"}]}}"#
            ),
            files: [], warnings: [])
        let gallery = PreviewGallery(directory: folder.path)
        let written = try gallery.write([pass, order])
        #expect(
            Set(written) == ["index.html", "order.com.example.shop/PO-1.html", "pass.com.example.shop/CARD-1.html"])
        let index = String(decoding: folder.read("index.html") ?? [], as: UTF8.self)
        #expect(index.contains("1 pass, 1 order ·"), "\(index)")
        #expect(index.contains("<a class=\"card order-card\" href=\"order.com.example.shop/PO-1.html\">"))
        #expect(index.contains("Ready for Pickup") && index.contains("Order 311 · order"))
        // The pass's page is the pass page, the order's the order page.
        #expect(
            String(decoding: folder.read("pass.com.example.shop/CARD-1.html") ?? [], as: UTF8.self).contains(
                "Back of the pass"))
        #expect(
            String(decoding: folder.read("order.com.example.shop/PO-1.html") ?? [], as: UTF8.self).contains(
                "class=\"order\""))

        // Without orders, the index is what it was: passes only; the order's page is removed.
        let passOnly = try gallery.write([pass])
        #expect(Set(passOnly) == ["index.html", "order.com.example.shop/PO-1.html"])
        #expect(folder.read("order.com.example.shop/PO-1.html") == nil)
        let passIndex = String(decoding: folder.read("index.html") ?? [], as: UTF8.self)
        #expect(passIndex.contains("1 pass · front, back, every language · unsigned"), "\(passIndex)")
        #expect(!passIndex.contains("class=\"card order-card\"") && !passIndex.contains(" order"), "\(passIndex)")
    }

    @Test(
        "passforge preview of the example project: a page for each example order, with its status, line item image and total"
    )
    func exampleOrders() throws {
        let project = try exampleProject()
        let preview = try passforge(["preview", "--out", "gallery"], in: project.path)
        #expect(preview.status == 0, "\(preview.output)")
        let shipping = String(
            decoding: project.read("gallery/order.com.example.passforge/SO-2026-1042.html") ?? [], as: UTF8.self)
        #expect(
            shipping.contains("On the Way") && shipping.contains("Brass desk lamp") && shipping.contains("€189.00"),
            "\(shipping.prefix(400))")
        #expect(shipping.contains("<img class=\"product\" alt=\"\" src=\"data:image/png;base64,"))
        let pickup = String(
            decoding: project.read("gallery/order.com.example.passforge/PO-2026-0311.html") ?? [], as: UTF8.self)
        #expect(pickup.contains("Ready for Pickup") && pickup.contains("<svg"), "\(pickup.prefix(400))")
    }
}
