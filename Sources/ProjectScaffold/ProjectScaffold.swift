package import AtomicFiles
import Foundation

/// Why `passforge init` wrote nothing, or stopped: the message for the person, with a `code` to match on
/// and the file-system failure underneath, when there was one.
package struct ScaffoldError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// A file of the new project is already there: nothing was written.
        case fileExists
        /// A folder or file could not be written.
        case fileSystem
        /// zlib could not compress an image.
        case compression
    }

    package var code: Code
    package var message: String
    package var underlying: AtomicFileSystem.Failure?
    package var description: String { message }

    init(_ code: Code, _ message: String, underlying: AtomicFileSystem.Failure? = nil) {
        (self.code, self.message, self.underlying) = (code, message, underlying)
    }
}

/// `passforge init`: a new project that builds and previews at once —
/// passforge.yml with comments, one template per pass style (with its
/// images) and one content file per template.
package enum ProjectScaffold {
    /// Writes the project into `directory` (created when missing). Refuses,
    /// writing nothing, when any of its files already exists. Returns the
    /// paths written, relative to `directory`.
    package static func write(into directory: String) throws(ScaffoldError) -> [String] {
        let files = try self.files()
        let existing = files.map(\.path).filter {
            AtomicFileSystem.exists((directory as NSString).appendingPathComponent($0))
        }
        guard existing.isEmpty else {
            throw ScaffoldError(
                .fileExists,
                "\(directory) already has "
                    + "\(existing.prefix(3).joined(separator: ", "))\(existing.count > 3 ? " and \(existing.count - 3) more" : ""); "
                    + "passforge init never overwrites files. Run it in an empty folder, or pass a new one: "
                    + "passforge init my-passes")
        }
        for file in files {
            let path = (directory as NSString).appendingPathComponent(file.path)
            do {
                try AtomicFileSystem.createDirectory((path as NSString).deletingLastPathComponent)
                // O_EXCL: a file that appeared since the check above is not overwritten either.
                try AtomicFileSystem.writeFile(file.bytes, to: path, sync: false, exclusive: true)
            } catch {
                throw ScaffoldError(.fileSystem, error.description, underlying: error)
            }
        }
        return files.map(\.path)
    }

    struct File {
        var path: String
        var bytes: [UInt8]
    }

    /// One template per style: folder name, style key, colours, fields, barcode format, and its example data.
    struct Style {
        var template: String
        var key: String
        var title: String
        var background: (UInt8, UInt8, UInt8)
        var foreground: (UInt8, UInt8, UInt8)
        var extra: String
        var fields: String
        var barcode: String
        var content: String
    }

    static func files() throws(ScaffoldError) -> [File] {
        var files = [
            File(path: "passforge.yml", bytes: Array(configuration.utf8)),
            File(path: ".gitignore", bytes: Array(gitignore.utf8)),
        ]
        for style in styles {
            let passJSON = """
                {
                  "description": "\(style.title) {{ serialNumber }}",
                  "logoText": "\(style.title)",
                  "backgroundColor": "rgb(\(style.background.0), \(style.background.1), \(style.background.2))",
                  "foregroundColor": "rgb(255, 255, 255)",
                  "labelColor": "rgb(\(style.foreground.0), \(style.foreground.1), \(style.foreground.2))",
                  "\(style.key)": {\(style.extra)
                \(style.fields)
                  },
                  "barcodes": [
                    { "format": "\(style.barcode)", "message": "{{ code }}", "messageEncoding": "iso-8859-1", "altText": "{{ code }}" }
                  ]
                }

                """
            files.append(File(path: "templates/\(style.template)/pass.json", bytes: Array(passJSON.utf8)))
            for scale in 1...3 {
                let suffix = scale == 1 ? "" : "@\(scale)x"
                files.append(
                    File(
                        path: "templates/\(style.template)/icon\(suffix).png",
                        bytes: try PNGImage.make(
                            width: 29 * scale, height: 29 * scale, background: style.background,
                            foreground: style.foreground)))
                files.append(
                    File(
                        path: "templates/\(style.template)/logo\(suffix).png",
                        bytes: try PNGImage.make(
                            width: 50 * scale, height: 50 * scale, background: style.background,
                            foreground: (255, 255, 255))))
            }
            files.append(File(path: "content/\(style.template)/example.yml", bytes: Array(style.content.utf8)))
        }
        files += try orderFiles()
        return files
    }

    /// One example order (Wallet Orders): an order template with a merchant logo and a product image,
    /// 300 × 300 PNG as Apple's Human Interface Guidelines ask, and one order that uses it.
    static func orderFiles() throws(ScaffoldError) -> [File] {
        let orderJSON = """
            {
              "orderType": "ecommerce",
              "orderNumber": "{{ orderNumber }}",
              "orderManagementURL": "https://shop.example.com/orders/{{ orderIdentifier }}",
              "status": "{{ status }}",
              "createdAt": "{{ createdAt }}",
              "merchant": {
                "displayName": "Example Shop",
                "merchantIdentifier": "merchant.com.example.shop",
                "url": "https://shop.example.com/",
                "logo": "logo"
              },
              "lineItems": [
                { "title": "{{ product }}", "quantity": 1, "image": "product", "price": { "amount": "{{ total }}", "currency": "EUR" } }
              ],
              "fulfillments": [
                {
                  "fulfillmentType": "shipping",
                  "fulfillmentIdentifier": "{{ orderIdentifier }}-1",
                  "status": "{{ shipping }}",
                  "carrier": "Example Post",
                  "trackingNumber": "{{ trackingNumber }}"
                }
              ],
              "payment": { "total": { "amount": "{{ total }}", "currency": "EUR" }, "status": "paid" }
            }

            """
        let content = """
            # One order per file: an entry whose template holds order.json is an order. Name it with
            # orderIdentifier (never change it once issued); the build sets updatedAt each time it changes.
            template: order
            orderIdentifier: EX-0001
            data:
              orderNumber: "0001"
              status: open
              createdAt: "2026-01-15T10:00:00Z"
              product: Example mug
              total: "12.50"
              shipping: onTheWay
              trackingNumber: "EP123456789"

            """
        return [
            File(path: "templates/order/order.json", bytes: Array(orderJSON.utf8)),
            File(
                path: "templates/order/logo.png",
                bytes: try PNGImage.make(
                    width: 300, height: 300, background: (255, 255, 255), foreground: (40, 90, 160))),
            File(
                path: "templates/order/product.png",
                bytes: try PNGImage.make(
                    width: 300, height: 300, background: (250, 250, 250), foreground: (200, 120, 40))),
            File(path: "content/orders/example.yml", bytes: Array(content.utf8)),
        ]
    }

    static let styles: [Style] = [
        Style(
            template: "boarding", key: "boardingPass", title: "Example Air", background: (18, 52, 110),
            foreground: (120, 190, 255),
            extra: "\n    \"transitType\": \"PKTransitTypeAir\",",
            fields: """
                      "headerFields": [{ "key": "gate", "label": "GATE", "value": "{{ gate }}", "changeMessage": "Your gate is now %@." }],
                      "primaryFields": [
                        { "key": "origin", "label": "{{ from.city }}", "value": "{{ from.code }}" },
                        { "key": "destination", "label": "{{ to.city }}", "value": "{{ to.code }}" }
                      ],
                      "auxiliaryFields": [{ "key": "departs", "label": "DEPARTS", "value": "{{ departs }}", "dateStyle": "PKDateStyleMedium", "timeStyle": "PKDateStyleShort", "ignoresTimeZone": true, "changeMessage": "Your flight now departs at %@." }],
                      "secondaryFields": [{ "key": "passenger", "label": "PASSENGER", "value": "{{ passenger }}" }, { "key": "seat", "label": "SEAT", "value": "{{ seat }}", "changeMessage": "Your seat is now %@." }],
                      "backFields": [{ "key": "help", "label": "Help", "value": "https://example.com/help" }]
                """, barcode: "PKBarcodeFormatPDF417",
            content: """
                # One pass per file: template, serialNumber (never change it once issued), data for the placeholders.
                template: boarding
                serialNumber: FLIGHT-0001
                data:
                  code: "EXAMPLE-FLIGHT-0001"
                  gate: A1
                  seat: 12A
                  passenger: Jane Appleseed
                  from: { code: LHR, city: London }
                  to: { code: JFK, city: New York }
                  departs: "2027-01-15T09:30:00Z"

                """),
        Style(
            template: "coupon", key: "coupon", title: "Example Market", background: (160, 40, 60),
            foreground: (255, 210, 120),
            extra: "",
            fields: """
                      "primaryFields": [{ "key": "offer", "label": "OFF YOUR NEXT VISIT", "value": "{{ discount }}", "numberStyle": "PKNumberStylePercent", "changeMessage": "Your discount is now %@." }],
                      "secondaryFields": [{ "key": "expires", "label": "VALID UNTIL", "value": "{{ expires }}", "dateStyle": "PKDateStyleMedium", "timeStyle": "PKDateStyleNone" }],
                      "backFields": [{ "key": "terms", "label": "Terms", "value": "One coupon per visit." }]
                """, barcode: "PKBarcodeFormatQR",
            content: """
                template: coupon
                serialNumber: COUPON-0001
                data:
                  code: "COUPON-0001"
                  discount: 0.15          # a number: numberStyle shows it as 15%
                  expires: "2027-03-31T23:59:00Z"

                """),
        Style(
            template: "event", key: "eventTicket", title: "Example Hall", background: (40, 20, 70),
            foreground: (230, 180, 255),
            extra: "",
            fields: """
                      "primaryFields": [{ "key": "event", "label": "EVENT", "value": "{{ event }}" }],
                      "secondaryFields": [{ "key": "date", "label": "DATE", "value": "{{ date }}", "dateStyle": "PKDateStyleMedium", "timeStyle": "PKDateStyleShort", "changeMessage": "The event now starts at %@." }],
                      "auxiliaryFields": [{ "key": "seat", "label": "SEAT", "value": "{{ seat }}" }],
                      "backFields": [{ "key": "venue", "label": "Venue", "value": "Example Hall, 1 Main Street" }]
                """, barcode: "PKBarcodeFormatQR",
            content: """
                template: event
                serialNumber: TICKET-0001
                data:
                  code: "TICKET-0001"
                  event: Spring Concert
                  date: "2027-04-10T19:30:00Z"
                  seat: Row F, seat 12

                """),
        Style(
            template: "generic", key: "generic", title: "Example Conference", background: (20, 90, 70),
            foreground: (170, 240, 210),
            extra: "",
            fields: """
                      "primaryFields": [{ "key": "name", "label": "NAME", "value": "{{ name }}" }],
                      "secondaryFields": [{ "key": "role", "label": "ROLE", "value": "{{ role }}" }],
                      "backFields": [{ "key": "wifi", "label": "Wi-Fi", "value": "example-guest" }]
                """, barcode: "PKBarcodeFormatQR",
            content: """
                template: generic
                serialNumber: BADGE-0001
                data:
                  code: "BADGE-0001"
                  name: Jane Appleseed
                  role: Speaker

                """),
        Style(
            template: "store-card", key: "storeCard", title: "Example Café", background: (90, 55, 30),
            foreground: (250, 215, 160),
            extra: "",
            fields: """
                      "primaryFields": [{ "key": "balance", "label": "BALANCE", "value": "{{ balance }}", "currencyCode": "EUR", "changeMessage": "Your balance is now %@." }],
                      "secondaryFields": [{ "key": "member", "label": "MEMBER", "value": "{{ member }}" }],
                      "backFields": [{ "key": "terms", "label": "Terms", "value": "The balance never expires." }]
                """, barcode: "PKBarcodeFormatQR",
            content: """
                template: store-card
                serialNumber: CARD-0001
                data:
                  code: "CARD-0001"
                  balance: 12.5           # a number: currencyCode shows it as €12.50
                  member: Jane Appleseed

                """),
    ]

    static let configuration = """
        # passforge project configuration.
        #
        # Values here are defaults for every pass; a template (templates/<name>/pass.json)
        # or a pass definition (content/**/*.yml, under `pass:`) may override any of them.
        # Settings come from command-line flags first, then the environment, then this file.
        #
        # No secrets here: the signing certificate, its key and password and the token
        # secret come from the environment (PASSFORGE_SIGNING_CERTIFICATE, PASSFORGE_SIGNING_KEY,
        # PASSFORGE_SIGNING_PASSWORD, PASSFORGE_WWDR_CERTIFICATE, PASSFORGE_TOKEN_SECRET).
        # Without them, `passforge build` signs with a development chain in .passforge/;
        # such passes open in the preview but do not install on a device.

        # Your Pass Type ID (Apple Developer account, Certificates, Identifiers & Profiles).
        # It must match the UID of the certificate that signs the passes.
        passTypeIdentifier: pass.com.example.passes

        # Your Team ID (10 characters): the OU of the signing certificate.
        teamIdentifier: ABCDE12345

        # Shown on the lock screen and in notifications.
        organizationName: Example

        # Your Order Type ID, for Wallet Orders (templates with order.json): the UID of the
        # certificate that signs the orders, and their APNs topic.
        orderTypeIdentifier: order.com.example.orders

        # Where devices register for updates and fetch new versions (https:// only).
        # Uncomment it when you deploy `passforge serve` or a static host:
        # webServiceURL: https://passes.example.com/

        """

    static let gitignore = """
        .passforge/
        state/
        preview/
        output/

        """
}
