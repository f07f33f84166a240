import Foundation
import PassModel
import TestSupport
import Testing

@testable import PassContent

/// Rendering an order and running Apple's order rules on it: each rule family that content can break
/// rejects, at the line of the template or content file that wrote the value.
@Suite struct OrderRenderingTests {
    typealias Fixture = OrderContentTests
    static let token = "0123456789abcdef0123"

    /// The order's diagnostics, from `entry` rendered with the `shop` template.
    func diagnostics(_ entry: String, templates: TemplateFolder = Fixture.shopTemplates()) throws -> [ContentDiagnostic]
    {
        switch try Fixture.render(entry, templates: templates) {
        case .success(let order): return order.orderDiagnostics()
        case .failure(let errors): return errors.diagnostics
        }
    }

    /// The one error of `rule` in `entry`'s order; fails the test when there is none.
    func error(_ rule: String, in entry: String, templates: TemplateFolder = Fixture.shopTemplates()) throws
        -> ContentDiagnostic
    {
        let found = try diagnostics(entry, templates: templates)
        return try #require(found.first { $0.rule == rule && $0.isError }, "no \(rule) in \(found)")
    }

    @Test func aValidOrderRendersWithoutProblems() throws {
        let folder = Fixture.shopTemplates()
        let entry = Fixture.entry + "\n  city: Bergen\n"
        let order = try Fixture.render(entry, templates: folder).get()
        #expect(order.kind == .order)
        #expect(order.typeIdentifier == "order.com.example.shop")
        #expect(order.source["orderIdentifier"]?.stringValue == "SO-1")
        #expect(order.source["orderIdentifier"]?.location.line == 2)
        #expect(order.source["orderManagementURL"]?.stringValue == "https://shop.example.com/orders/SO-1")
        // A whole-string placeholder keeps the value's type: the line items are a list of objects.
        #expect(order.source["lineItems"]?.jsonValue == [["title": "Mug", "quantity": 2, "image": "mug"]])
        #expect(order.source["updatedAt"] == nil)
        #expect(order.orderDiagnostics().isEmpty, "\(order.orderDiagnostics())")
    }

    @Test func orderStringsAreFilledPerLanguage() throws {
        let order = try Fixture.render(Fixture.entry + "\n  city: Bergen\n", templates: Fixture.shopTemplates()).get()
        let german = try #require(order.files.first { $0.name == "de.lproj/order.strings" })
        let english = try #require(order.files.first { $0.name == "en.lproj/order.strings" })
        #expect(try PassStrings.table(german.bytes)["status_text"] == "Unterwegs nach Bergen")
        #expect(try PassStrings.table(english.bytes)["status_text"] == "On its way to Bergen")
        #expect(german.source == "content/orders/o.yml")
        // Without a value, the placeholder in order.strings is an error that names the order.
        let missing = try error("placeholder.missing", in: Fixture.entry)
        #expect(missing.message.hasPrefix("order SO-1: placeholder {{ city }} has no value"))
    }

    // MARK: One rejecting test per rule family

    @Test func aRequiredKeyMissingFromTheTemplateIsAnErrorAtTheTemplateLine() throws {
        let json = Fixture.orderJSON.replacingOccurrences(of: "    \"displayName\": \"Northwind Home\",\n", with: "")
        let folder = Fixture.shopTemplates(orderJSON: json)
        let error = try error("order.key.required", in: Fixture.entry + "\n  city: Bergen\n", templates: folder)
        #expect(error.location.file == folder.file("shop/order.json"))
        #expect(error.location.line == line(of: "\"merchant\"", in: json))
        #expect(error.keyPath == ["merchant", "displayName"])
        #expect(error.message.contains("order SO-1:") && error.message.contains("add \"displayName\""))
        #expect(error.notes.first?.location.file == "content/orders/o.yml")
    }

    @Test func anEnumValueFromContentIsAnErrorAtTheContentLine() throws {
        let entry =
            Fixture.entry.replacingOccurrences(of: "status: open", with: "status: shiped") + "\n  city: Bergen\n"
        let error = try error("order.enum", in: entry)
        #expect(error.location.file == "content/orders/o.yml" && error.location.line == 4)
        #expect(error.message.contains("\"open\", \"completed\", \"cancelled\""))
    }

    @Test func aFulfillmentStatusIsCheckedAgainstItsType() throws {
        let entry =
            Fixture.entry + """

                  city: Bergen
                order:
                  fulfillments:
                    - fulfillmentType: pickup
                      fulfillmentIdentifier: P-1
                      displayName: Harbour Street
                      status: onTheWay
                """
        let error = try error("order.enum", in: entry)
        #expect(error.keyPath == ["fulfillments", 0, "status"])
        #expect(error.location.line == line(of: "status: onTheWay", in: entry))
        #expect(error.message.contains("readyForPickup"))
    }

    @Test func aDateThatIsNotRFC3339IsAnErrorAtTheContentLine() throws {
        let entry =
            Fixture.entry.replacingOccurrences(of: "\"2026-11-20T14:05:00+01:00\"", with: "\"2026-11-20 14:05\"")
            + "\n  city: Bergen\n"
        let found = try diagnostics(entry)
        let error = try #require(found.first { $0.rule == "order.date" })
        #expect(error.location.file == "content/orders/o.yml" && error.location.line == 5)
        // Reported once, at createdAt: the provisional updatedAt does not repeat it.
        #expect(found.filter { $0.rule == "order.date" }.count == 1)
    }

    @Test func aCurrencyAndAnAmountAreCheckedAtTheContentLine() throws {
        let entry =
            Fixture.entry.replacingOccurrences(of: "currency: EUR", with: "currency: EU")
            .replacingOccurrences(of: "total: \"19.90\"", with: "total: \"19,90\"") + "\n  city: Bergen\n"
        let currency = try error("order.currency", in: entry)
        #expect(currency.location.line == 7 && currency.message.contains("ISO 4217"))
        let amount = try error("order.amount", in: entry)
        #expect(amount.location.line == 6 && amount.keyPath == ["payment", "total", "amount"])
    }

    @Test func aURLFromTheOverrideIsAnErrorAtItsLine() throws {
        let entry =
            Fixture.entry
            + "\n  city: Bergen\norder:\n  orderManagementURL: shop.example.com/orders/1\n  webServiceURL: http://orders.example.com/\n  authenticationToken: \(Self.token)\n"
        let found = try diagnostics(entry)
        let urls = found.filter { $0.rule == "order.url" || $0.rule == "order.url.https" }
        #expect(
            urls.map(\.location.line) == [
                line(of: "orderManagementURL", in: entry), line(of: "webServiceURL", in: entry),
            ], "\(found)")
        #expect(urls.last?.message.contains("https://") == true)
    }

    @Test func aCreatedAtInTheFutureIsAnErrorAtItsLine() throws {
        let order = try Fixture.render(Fixture.entry + "\n  city: Bergen\n", templates: Fixture.shopTemplates()).get()
        let createdAt = try #require(order.source["createdAt"]?.stringValue)
        let created = try #require(ISO8601DateFormatter().date(from: createdAt))
        #expect(order.orderDiagnostics(checkedAt: created).isEmpty)
        let error = try #require(
            order.orderDiagnostics(checkedAt: created.addingTimeInterval(-60)).first {
                $0.rule == "order.createdAt.future"
            })
        #expect(error.location.file == "content/orders/o.yml" && error.location.line == 5 && error.isError)
        // A new order: updatedAt is createdAt as written.
        #expect(order.withUpdatedAtOfNewOrder().source["updatedAt"]?.stringValue == createdAt)
    }

    @Test func anImageThatIsNotInTheOrderIsAnErrorAtTheLineThatNamesIt() throws {
        let entry = Fixture.entry.replacingOccurrences(of: "image: mug", with: "image: teapot") + "\n  city: Bergen\n"
        let error = try error("order.image", in: entry)
        #expect(
            error.location.file == "content/orders/o.yml" && error.location.line == line(of: "image: teapot", in: entry)
        )
        #expect(error.keyPath == ["lineItems", 0, "image"])
        #expect(error.message.contains("teapot.png"))
    }

    @Test func anImageThatIsNotPNGOrJPEGIsAnErrorAndAWrongSizeAWarning() throws {
        let folder = Fixture.shopTemplates()
        folder.write("shop/mug.png", bytes: Array("not an image".utf8))
        folder.write("shop/logo.png", bytes: PNGFactory.png(width: 120, height: 80))
        let found = try diagnostics(Fixture.entry + "\n  city: Bergen\n", templates: folder)
        let format = try #require(found.first { $0.rule == "order.image" })
        #expect(
            format.location.line == line(of: "image: mug", in: Fixture.entry)
                && format.message.contains("not a PNG or JPEG"))
        let size = try #require(found.first { $0.rule == "order.image.size" })
        #expect(!size.isError && size.location.file == folder.file("shop/order.json"))
        #expect(size.location.line == line(of: "\"logo\"", in: Fixture.orderJSON) && size.message.contains("120 × 80"))
    }

    @Test func anOwnImageReplacesTheTemplatesOne() throws {
        let folder = Fixture.shopTemplates()
        folder.write(
            "content/photos/mug.jpg",
            bytes: [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x01, 0x2C, 0x01, 0x2C, 0x01, 0x01, 0x11, 0x00])
        let entry =
            Fixture.entry.replacingOccurrences(of: "image: mug", with: "image: own-mug")
            + "\n  city: Bergen\nimages:\n  own-mug.jpg: photos/mug.jpg\n"
        let order = try Fixture.render(entry, templates: folder, file: folder.file("content/o.yml")).get()
        #expect(order.files.contains { $0.name == "own-mug.jpg" })
        #expect(order.orderDiagnostics().isEmpty, "\(order.orderDiagnostics())")
    }

    @Test func aReceiptMustBeAFileOfTheOrder() throws {
        let transaction = """

              city: Bergen
            order:
              payment:
                transactions:
                  - amount: { amount: "19.90", currency: EUR }
                    createdAt: "2026-11-20T14:05:00+01:00"
                    paymentMethod: { displayName: Visa }
                    status: completed
                    transactionType: purchase
                    receipt: receipt.pdf
            """
        let folder = Fixture.shopTemplates()
        let error = try error("order.file", in: Fixture.entry + transaction, templates: folder)
        #expect(error.location.line == line(of: "receipt: receipt.pdf", in: Fixture.entry + transaction))
        folder.write("shop/receipt.pdf", "%PDF-1.4\n%%EOF\n")
        #expect(try diagnostics(Fixture.entry + transaction, templates: folder).isEmpty)
    }

    @Test func anUnknownKeyIsAWarningWithASpellingHint() throws {
        let entry = Fixture.entry + "\n  city: Bergen\norder:\n  stauts: open\n"
        let found = try diagnostics(entry)
        let warning = try #require(found.first { $0.rule == "unknown-key" })
        #expect(!warning.isError && warning.location.line == line(of: "stauts", in: entry))
        #expect(warning.message.contains("Did you mean \"status\""))
        #expect(found.filter(\.isError).isEmpty, "\(found)")
    }

    @Test func schemaVersionOtherThanOneIsAnError() throws {
        let entry = Fixture.entry + "\n  city: Bergen\norder: {schemaVersion: 2}\n"
        let error = try error("order.schemaVersion", in: entry)
        #expect(error.location.line == line(of: "schemaVersion", in: entry))
    }

    // MARK: updatedAt and createdAt

    @Test func updatedAtIsTheBuildsAndFormattedFromTheUpdateTag() throws {
        #expect(RenderedPass.rfc3339(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RenderedPass.rfc3339(millisecondsSince1970: 1_764_115_998_123) == "2025-11-26T00:13:18.123Z")
        #expect(RenderedPass.rfc3339(millisecondsSince1970: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        let order = try Fixture.render(Fixture.entry + "\n  city: Bergen\n", templates: Fixture.shopTemplates()).get()
        let first = order.withUpdatedAt(millisecondsSince1970: 1_800_000_000_000)
        let next = order.withUpdatedAt(millisecondsSince1970: 1_800_000_000_001)
        let firstText = try #require(first.source["updatedAt"]?.stringValue)
        let nextText = try #require(next.source["updatedAt"]?.stringValue)
        #expect(firstText < nextText)
        #expect(first.orderDiagnostics().isEmpty, "\(first.orderDiagnostics())")
        #expect(
            order.withUpdatedAt(Date(timeIntervalSince1970: 1_800_000_000.25)).source["updatedAt"]?.stringValue
                == "2027-01-15T08:00:00.250Z")
    }

    @Test func anUpdateTagBeforeCreatedAtIsAnErrorAtCreatedAt() throws {
        let order = try Fixture.render(Fixture.entry + "\n  city: Bergen\n", templates: Fixture.shopTemplates()).get()
        let early = order.withUpdatedAt(millisecondsSince1970: 1_700_000_000_000)
        let error = try #require(early.orderDiagnostics().first { $0.rule == "order.updatedAt" })
        #expect(error.location.file == "content/orders/o.yml" && error.location.line == 5)
    }

    @Test func updatedAtInContentIsAnError() throws {
        let entry = Fixture.entry + "\n  city: Bergen\norder:\n  updatedAt: \"2026-11-21T10:00:00Z\"\n"
        let error = try error("content.updated-at", in: entry)
        #expect(error.location.line == line(of: "updatedAt", in: entry))
        #expect(error.message.contains("set by the build"))
    }

    @Test func createdAtIsRequired() throws {
        let json = Fixture.orderJSON.replacingOccurrences(of: "  \"createdAt\": \"{{ createdAt }}\",\n", with: "")
        let error = try error(
            "order.key.required", in: Fixture.entry + "\n  city: Bergen\n",
            templates: Fixture.shopTemplates(orderJSON: json))
        #expect(error.keyPath == ["createdAt"])
    }

    // MARK: The repository's examples

    @Test func theExampleOrdersRenderAndPassEveryRule() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let loader = TemplateLoader(directory: "\(root)/templates")
        let files = try ContentLoader(directory: "\(root)/content").contentFiles()
        var fulfillmentTypes: [String] = []
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: file))
            let (definitions, problems) = ContentLoader.definitions(in: file, bytes: Array(bytes))
            #expect(problems.isEmpty, "\(problems)")
            for definition in definitions where definition.kind == .order {
                let template = try loader.load(definition.templateName).get()
                #expect(template.kind == .order && template.warnings.isEmpty, "\(template.warnings)")
                var order = try PassRenderer(
                    configuration: ProjectConfiguration(), boundary: ProjectBoundary(folders: [root])
                )
                .render(definition, template: template).get()
                order.source.set("authenticationToken", to: .scalar(.string(Self.token), at: definition.location))
                let found = order.withUpdatedAt(Date()).orderDiagnostics()
                #expect(found.isEmpty, "\(found)")
                let images = order.source["lineItems"]?.elements?.compactMap { $0["image"]?.stringValue } ?? []
                #expect(!images.isEmpty, "each example order has a product image")
                fulfillmentTypes +=
                    order.source["fulfillments"]?.elements?.compactMap { $0["fulfillmentType"]?.stringValue } ?? []
            }
        }
        #expect(fulfillmentTypes.sorted() == ["pickup", "shipping"])
    }
}
