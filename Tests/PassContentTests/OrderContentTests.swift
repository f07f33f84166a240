import Foundation
import PassModel
import TestSupport
import Testing

@testable import PassContent

/// The 1-based line of the first line of `text` that contains `needle`.
func line(of needle: String, in text: String) -> Int {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    return (lines.firstIndex { $0.contains(needle) } ?? -1) + 1
}

/// Order content: order templates, order entries, the kind checks, passforge.yml's order defaults.
@Suite struct OrderContentTests {
    static let orderJSON = """
        {
          "orderTypeIdentifier": "order.com.example.shop",
          "orderType": "ecommerce",
          "orderManagementURL": "https://shop.example.com/orders/{{ orderIdentifier }}",
          "status": "{{ status }}",
          "statusDescription": "status_text",
          "createdAt": "{{ createdAt }}",
          "merchant": {
            "displayName": "Northwind Home",
            "merchantIdentifier": "merchant.com.example.northwind",
            "url": "https://shop.example.com/",
            "logo": "logo"
          },
          "lineItems": "{{ lineItems }}",
          "payment": { "total": { "amount": "{{ total }}", "currency": "{{ currency }}" }, "status": "paid" }
        }
        """

    static let entry = """
        template: shop
        orderIdentifier: SO-1
        data:
          status: open
          createdAt: "2026-11-20T14:05:00+01:00"
          total: "19.90"
          currency: EUR
          lineItems:
            - title: Mug
              quantity: 2
              image: mug
        """

    /// A templates folder with the order template `shop`: order.json, a 300 × 300 logo and product image,
    /// and English and German order.strings.
    static func shopTemplates(orderJSON: String = orderJSON) -> TemplateFolder {
        let folder = TemplateFolder()
        folder.write("shop/order.json", orderJSON)
        folder.write("shop/logo.png", bytes: PNGFactory.png(width: 300, height: 300))
        folder.write("shop/mug.png", bytes: PNGFactory.png(width: 300, height: 300))
        folder.write("shop/en.lproj/order.strings", "\"status_text\" = \"On its way to {{ city }}\";\n")
        folder.write("shop/de.lproj/order.strings", "\"status_text\" = \"Unterwegs nach {{ city }}\";\n")
        return folder
    }

    static func definitions(_ text: String, file: String = "content/orders/o.yml") -> (
        [PassDefinition], [ContentDiagnostic]
    ) {
        let result = ContentLoader.definitions(in: file, bytes: Array(text.utf8))
        return (result.definitions, result.problems)
    }

    static func render(
        _ text: String, templates: TemplateFolder, configuration: ProjectConfiguration = ProjectConfiguration(),
        file: String = "content/orders/o.yml"
    ) throws -> Result<RenderedPass, ContentErrors> {
        let (definitions, problems) = definitions(text, file: file)
        try #require(problems.filter(\.isError).isEmpty, "\(problems)")
        let template = try templates.loader.load(try #require(definitions.first).templateName).get()
        return PassRenderer(configuration: configuration, boundary: ProjectBoundary(folders: ["/"]))
            .render(definitions[0], template: template)
    }

    // MARK: Templates

    @Test func aFolderWithOrderJSONIsAnOrderTemplate() throws {
        let folder = Self.shopTemplates()
        let template = try folder.loader.load("shop").get()
        #expect(template.kind == .order)
        #expect(template.passJSONPath == folder.file("shop/order.json"))
        #expect(
            template.files.map(\.name) == ["de.lproj/order.strings", "en.lproj/order.strings", "logo.png", "mug.png"])
        #expect(
            template.localizations.map(\.fileName).sorted() == ["de.lproj/order.strings", "en.lproj/order.strings"])
        #expect(template.warnings.isEmpty, "\(template.warnings)")
        #expect(template.passJSON["merchant"]?["logo"]?.location.line == line(of: "\"logo\"", in: Self.orderJSON))
    }

    @Test func anOrderTemplateTakesJPEGImagesAndIgnoresPassStrings() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/banner.jpg", bytes: [0xFF, 0xD8, 0xFF, 0xD9])
        folder.write("shop/fr.lproj/pass.strings", "\"status_text\" = \"En route\";\n")
        let template = try folder.loader.load("shop").get()
        #expect(template.files.contains { $0.name == "banner.jpg" })
        let ignored = try #require(template.warnings.first { $0.rule == "template.ignored-file" })
        #expect(ignored.location.file == folder.file("shop/fr.lproj/pass.strings"))
        #expect(ignored.message.contains("order.strings"))
        // A pass template still takes PNG only.
        folder.write("coupon/pass.json", "{\"description\": \"x\"}")
        folder.write("coupon/photo.jpg", bytes: [0xFF, 0xD8, 0xFF, 0xD9])
        let pass = try folder.loader.load("coupon").get()
        #expect(pass.kind == .pass)
        #expect(pass.files.isEmpty)
        #expect(pass.warnings.map(\.rule) == ["template.ignored-file"])
    }

    @Test func aFolderWithPassJSONAndOrderJSONIsAnErrorAtTheFolder() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/pass.json", "{\"description\": \"x\"}")
        guard case .failure(let errors) = folder.loader.load("shop") else {
            Issue.record("a template with both root files was accepted")
            return
        }
        let error = try #require(errors.diagnostics.first)
        #expect(errors.diagnostics.count == 1)
        #expect(error.rule == "template.kind")
        #expect(error.location.file == folder.file("shop"))
        #expect(error.message.contains("pass.json and order.json") && error.message.contains("move order.json"))
    }

    @Test func aSyntaxErrorInOrderStringsIsAnErrorAtItsLine() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/de.lproj/order.strings", "\"a\" = \"b\";\n\"status_text\" = \"x\"\n\"c\" = \"d\";\n")
        guard case .failure(let errors) = folder.loader.load("shop") else {
            Issue.record("a broken order.strings was accepted")
            return
        }
        let error = try #require(errors.diagnostics.first)
        #expect(error.rule == "strings.syntax")
        #expect(error.location.file == folder.file("shop/de.lproj/order.strings") && error.location.line == 3)
        #expect(error.message.hasPrefix("de.lproj/order.strings:"))
    }

    @Test func aLocalizableOrderKeyMissingInOneLanguageIsAWarningAtItsLine() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/fr.lproj/order.strings", "\"other\" = \"autre\";\n")
        let template = try folder.loader.load("shop").get()
        let warning = try #require(template.warnings.first { $0.rule == "strings.missing" })
        #expect(warning.location.file == folder.file("shop/order.json"))
        #expect(warning.location.line == line(of: "status_text", in: Self.orderJSON))
        #expect(warning.message.contains("fr.lproj/order.strings"))
    }

    @Test func orderStringsWithDifferentKeysAreAWarningAtTheFileThatLacksOne() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/en.lproj/order.strings", "\"status_text\" = \"On its way\";\n\"gift_note\" = \"A gift\";\n")
        let template = try folder.loader.load("shop").get()
        let uneven = template.warnings.filter { $0.rule == "strings.uneven" }
        #expect(uneven.count == 1, "\(template.warnings)")
        #expect(uneven.first?.location.file == folder.file("shop/de.lproj/order.strings"))
        #expect(uneven.first?.message.contains("\"gift_note\"") == true)
        // Passes keep their rule: only keys the pass uses must be in every language.
        folder.write("coupon/pass.json", "{\"description\": \"x\"}")
        folder.write("coupon/en.lproj/pass.strings", "\"a\" = \"A\";\n")
        folder.write("coupon/de.lproj/pass.strings", "\"b\" = \"B\";\n")
        #expect(try folder.loader.load("coupon").get().warnings.isEmpty)
    }

    @Test func anOrderTemplateHoldsAPDFReceipt() throws {
        let folder = Self.shopTemplates()
        folder.write("shop/receipt.pdf", "%PDF-1.4\n%%EOF\n")
        let template = try folder.loader.load("shop").get()
        #expect(template.files.contains { $0.name == "receipt.pdf" })
        #expect(template.warnings.isEmpty, "\(template.warnings)")
    }

    // MARK: Entries

    @Test func oneOrderPerFile() throws {
        let (definitions, problems) = Self.definitions(
            Self.entry + "\norder: {orderNumber: \"1042\"}\nimages: {mug.jpg: photos/mug.jpg}\n")
        #expect(problems.isEmpty, "\(problems)")
        let order = try #require(definitions.first)
        #expect(order.kind == .order)
        #expect(order.serialNumber == "SO-1" && order.identifier == "SO-1")
        #expect(order.serialLocation.line == 2)
        #expect(order.passOverride?["orderNumber"]?.stringValue == "1042")
        #expect(order.images.first?.name == "mug.jpg")
    }

    @Test func anOrderInJSON() throws {
        let (definitions, problems) = Self.definitions(
            """
            {
              "template": "shop",
              "orderIdentifier": "SO-9",
              "order": { "status": "completed" }
            }
            """, file: "content/orders/o.json")
        #expect(problems.isEmpty, "\(problems)")
        let order = try #require(definitions.first)
        #expect(order.kind == .order && order.serialNumber == "SO-9" && order.serialLocation.line == 3)
        #expect(order.passOverride?["status"]?.stringValue == "completed")
    }

    @Test func manyOrdersWithDefaultsDeepMerged() throws {
        let (definitions, problems) = Self.definitions(
            """
            template: shop
            defaults:
              data: { currency: EUR, status: open }
              order: { merchant: { displayName: Northwind } }
            orders:
              - orderIdentifier: SO-1
                data: { total: "5.00" }
              - orderIdentifier: SO-2
                data: { total: "7.00", status: completed }
                order: { orderNumber: "2" }
            """)
        #expect(problems.isEmpty, "\(problems)")
        #expect(definitions.map(\.serialNumber) == ["SO-1", "SO-2"])
        #expect(definitions.allSatisfy { $0.kind == .order && $0.templateName == "shop" })
        #expect(
            definitions[0].data["currency"]?.stringValue == "EUR"
                && definitions[1].data["status"]?.stringValue == "completed")
        #expect(definitions[1].passOverride?["merchant"]?["displayName"]?.stringValue == "Northwind")
        #expect(definitions[1].passOverride?["orderNumber"]?.stringValue == "2")
        #expect(definitions[1].serialLocation.line == 8)
    }

    @Test func aPassKeyInAnOrderIsAnErrorAtItsLine() throws {
        for (text, key, line) in [
            ("template: shop\norderIdentifier: SO-1\npass: {status: open}\n", "pass", 3),
            ("template: shop\norders:\n  - orderIdentifier: SO-1\n  - serialNumber: SO-2\n", "serialNumber", 4),
            ("template: shop\norderIdentifier: SO-1\noffer: welcome\n", "offer", 3),
        ] {
            let (definitions, problems) = Self.definitions(text)
            #expect(definitions.map(\.serialNumber) == (key == "serialNumber" ? ["SO-1"] : []))
            let error = try #require(problems.first { $0.rule == "content.kind-key" }, "\(problems)")
            #expect(error.location.file == "content/orders/o.yml" && error.location.line == line, "\(error)")
            #expect(error.message.hasPrefix("`\(key):` belongs to a pass"), "\(error)")
        }
        let (_, problems) = Self.definitions("template: shop\norderIdentifier: SO-1\npass: {status: open}\n")
        #expect(problems.first?.message.contains("rename the key") == true)
    }

    @Test func anOrderKeyInAPassIsAnErrorAtItsLine() throws {
        for (text, key, line) in [
            ("template: coupon\nserialNumber: C-1\norder: {status: open}\n", "order", 3),
            ("template: coupon\npasses:\n  - serialNumber: C-1\n  - orderIdentifier: C-2\n", "orderIdentifier", 4),
            (
                "template: coupon\ndefaults:\n  order: {status: open}\npasses:\n  - serialNumber: C-1\n  - serialNumber: C-2\n",
                "order", 3
            ),
        ] {
            let (definitions, problems) = Self.definitions(text)
            let errors = problems.filter { $0.rule == "content.kind-key" }
            #expect(errors.count == 1, "\(problems)")
            let error = try #require(errors.first)
            #expect(error.location.line == line, "\(error)")
            #expect(error.message.hasPrefix("`\(key):` belongs to an order, but"), "\(error)")
            #expect(error.message.contains("orderIdentifier:") && error.message.contains("orders:"), "\(error)")
            #expect(!definitions.contains { $0.kind == .order })
        }
    }

    @Test func passesAndOrdersInOneFileAreAnError() throws {
        let (definitions, problems) = Self.definitions(
            "template: shop\npasses: []\norders:\n  - orderIdentifier: SO-1\n")
        #expect(definitions.isEmpty)
        let error = try #require(problems.first)
        #expect(error.rule == "content.kind-key" && error.location.line == 3)
    }

    @Test func anOrderWithoutIdentifierIsAnErrorThatNamesOrderIdentifier() throws {
        let (definitions, problems) = Self.definitions("template: shop\norders:\n  - data: {status: open}\n")
        #expect(definitions.isEmpty)
        let error = try #require(problems.first)
        #expect(error.rule == "content.required" && error.location.line == 3)
        #expect(error.message.contains("orderIdentifier"))
    }

    @Test func anEntryWhoseKindIsNotItsTemplatesIsAnErrorAtTheIdentifier() throws {
        let folder = Self.shopTemplates()
        folder.write("coupon/pass.json", "{\"description\": \"x\"}")
        // A pass entry naming an order template.
        guard case .failure(let errors) = try Self.render("template: shop\nserialNumber: SO-1\n", templates: folder)
        else {
            Issue.record("a pass entry rendered with an order template")
            return
        }
        let error = try #require(errors.diagnostics.first)
        #expect(error.rule == "content.template-kind")
        #expect(error.location.file == "content/orders/o.yml" && error.location.line == 2)
        #expect(error.message.contains("`shop` is an order template") && error.message.contains("`orderIdentifier:`"))
        // An order entry naming a pass template.
        guard case .failure(let second) = try Self.render("template: coupon\norderIdentifier: C-1\n", templates: folder)
        else {
            Issue.record("an order entry rendered with a pass template")
            return
        }
        let other = try #require(second.diagnostics.first)
        #expect(other.rule == "content.template-kind" && other.location.line == 2)
        #expect(other.message.contains("`coupon` is a pass template") && other.message.contains("`serialNumber:`"))
    }

    // MARK: passforge.yml

    @Test func orderTypeIdentifierAndWebServiceURLApplyToOrdersOnly() throws {
        let root = try YAMLSourceParser.parse(
            Array(
                """
                passTypeIdentifier: pass.com.example.shop
                teamIdentifier: ABCDE12345
                organizationName: Northwind
                orderTypeIdentifier: order.com.example.shop
                webServiceURL: https://orders.example.com/
                signing:
                  order.com.example.shop: { certificate: secrets/order.pem, key: secrets/order.key }
                """.utf8), file: "passforge.yml")
        let configuration = try ProjectConfiguration.parse(root, file: "passforge.yml")
        #expect(configuration.orderDefaults.members?.map(\.key) == ["orderTypeIdentifier", "webServiceURL"])
        #expect(
            configuration.passDefaults.members?.map(\.key) == [
                "passTypeIdentifier", "teamIdentifier", "organizationName", "webServiceURL",
            ])
        #expect(configuration.defaultValue("orderTypeIdentifier") == "order.com.example.shop")
        #expect(configuration.signing["order.com.example.shop"]?.certificate == "secrets/order.pem")

        let template = Self.orderJSON.replacingOccurrences(
            of: "  \"orderTypeIdentifier\": \"order.com.example.shop\",\n", with: "")
        let rendered = try Self.render(
            Self.entry + "\n  city: Bergen\n", templates: Self.shopTemplates(orderJSON: template),
            configuration: configuration
        ).get()
        #expect(rendered.typeIdentifier == "order.com.example.shop")
        #expect(rendered.source["orderTypeIdentifier"]?.location.line == 4)
        #expect(rendered.source["webServiceURL"]?.stringValue == "https://orders.example.com/")
        for passOnly in ["passTypeIdentifier", "teamIdentifier", "organizationName", "formatVersion"] {
            #expect(rendered.source[passOnly] == nil, "\(passOnly)")
        }
        #expect(rendered.source["schemaVersion"]?.scalarValue == .int(1))
        // A webServiceURL needs an authenticationToken, which the build sets (as for passes).
        #expect(rendered.orderDiagnostics().map(\.rule).contains("order.authenticationToken"))
        var withToken = rendered
        withToken.source.set(
            "authenticationToken",
            to: .scalar(.string("0123456789abcdef0123"), at: SourceLocation(file: "passforge.yml")))
        #expect(withToken.orderDiagnostics().filter(\.isError).isEmpty, "\(withToken.orderDiagnostics())")
    }

    @Test func anUnknownConfigurationKeyListsOrderTypeIdentifier() throws {
        let root = try YAMLSourceParser.parse(
            Array("orderTypeIdentifer: order.com.example.shop\n".utf8), file: "passforge.yml")
        #expect(throws: ContentErrors.self) { try ProjectConfiguration.parse(root, file: "passforge.yml") }
        do { _ = try ProjectConfiguration.parse(root, file: "passforge.yml") } catch {
            #expect(error.diagnostics.first?.rule == "config.unknown-key")
            #expect(error.diagnostics.first?.message.contains("orderTypeIdentifier") == true)
        }
    }
}
