import AtomicFiles
import Foundation
import PassContent
import PassModel
import PassPackage
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// Orders through the build: the same tree, state, tokens and incremental
/// rules as passes, with what Apple asks of an order (a SHA-256 manifest, the
/// Order Type ID certificate, an updatedAt that strictly increases).
@Suite struct OrderBuildTests {
    static let secret = "order-build-token-secret-0123456789"

    func project(passes: Int = 2, orders: [String] = ["SO-1", "SO-2"]) -> ProjectFixture {
        let project = ProjectFixture(passCount: passes)
        project.addOrderTemplate()
        for order in orders { project.writeOrder(order) }
        return project
    }

    func build(_ project: ProjectFixture) throws -> BuildReport {
        try PassBuilder(settings: try project.buildSettings(secret: Self.secret)).build()
    }

    func orderJSON(_ project: ProjectFixture, _ identifier: String) throws -> JSONValue {
        let bytes = try #require(
            AtomicFileSystem.readFile("\(project.output)/v1/orders/\(TestPKI.orderType)/\(identifier)"))
        let entries = try ZipArchive.read(bytes)
        let manifest = try JSONValue(parsing: try #require(entries.first { $0.name == "manifest.json" }).bytes)
        let order = try #require(entries.first { $0.name == "order.json" }).bytes
        // The manifest lists SHA-256 (64 hex digits) of every file, as orders require; a pass's lists SHA-1.
        #expect(manifest["order.json"]?.stringValue == Manifest.Digest.sha256.hex(order))
        #expect(manifest["mug.png"]?.stringValue?.count == 64)
        return try JSONValue(parsing: order)
    }

    @Test func passesAndOrdersShareOneTreeAndOneState() throws {
        let project = project()
        let report = try build(project)
        #expect(
            report.built.sorted() == [
                "\(TestPKI.orderType)/SO-1", "\(TestPKI.orderType)/SO-2", "\(TestPKI.passType)/C-0000",
                "\(TestPKI.passType)/C-0001",
            ])
        let state = try BuildState.load(from: project.output)
        let order = try #require(state.passes["\(TestPKI.orderType)/SO-1"])
        #expect(order.kind == .order && order.path == "v1/orders/\(TestPKI.orderType)/SO-1")
        #expect(
            order.downloadPath.hasSuffix(".order")
                && order.tokenPath?.hasPrefix("by-token/\(TestPKI.orderType)/SO-1.") == true)
        #expect(state.passes["\(TestPKI.passType)/C-0000"]?.kind == .pass)
        for path in order.files {
            #expect(FileManager.default.fileExists(atPath: "\(project.output)/\(path)"), "\(path)")
        }
        let json = try orderJSON(project, "SO-1")
        #expect(
            json["orderIdentifier"]?.stringValue == "SO-1"
                && json["orderTypeIdentifier"]?.stringValue == TestPKI.orderType)
        // The derived token, as for a pass: HMAC of the type and the identifier.
        #expect(json["authenticationToken"]?.stringValue.map { order.tokenPath!.hasSuffix(".\($0)") } == true)
        let csv = String(
            decoding: try #require(AtomicFileSystem.readFile("\(project.output)/.passforge/downloads.csv")),
            as: UTF8.self)
        #expect(csv.contains("\(TestPKI.orderType),SO-1,\(order.downloadPath)"))
        // Read back by the build's decoder and by the readers': the order keyed as an order.
        let bytes = try #require(AtomicFileSystem.readFile(BuildState.path(in: project.output)))
        #expect(try BuildStateDecoding.decode(bytes, jobs: 1).state == state)
        let index = try PublishedIndex.decode(bytes, of: project.output)
        #expect(
            index.items[ItemKey(kind: .order, typeIdentifier: TestPKI.orderType, identifier: "SO-1")]?.path
                == order.path)
    }

    @Test func aNewOrderIsUpdatedWhenCreatedAndOnlyAChangedOrderGetsANewUpdatedAt() throws {
        let project = project()
        _ = try build(project)
        let first = try BuildState.load(from: project.output)
        // Apple's Order page: updatedAt "should equal createdAt if the order hasn't had any updates".
        let json = try orderJSON(project, "SO-1")
        let updatedAt = json["updatedAt"]?.stringValue
        #expect(updatedAt == "2026-11-20T14:05:00+01:00" && updatedAt == json["createdAt"]?.stringValue)
        let unchangedBytes = AtomicFileSystem.readFile("\(project.output)/v1/orders/\(TestPKI.orderType)/SO-2")

        project.writeOrder("SO-1", status: "completed", shipping: "delivered")
        let report = try build(project)
        #expect(report.built == ["\(TestPKI.orderType)/SO-1"])
        let second = try BuildState.load(from: project.output)
        let newUpdatedAt = try #require(try orderJSON(project, "SO-1")["updatedAt"]?.stringValue)
        // The change's updatedAt is the time of the build's update tag: later than createdAt, strictly increasing.
        #expect(
            newUpdatedAt
                == RenderedPass.rfc3339(millisecondsSince1970: second.passes["\(TestPKI.orderType)/SO-1"]!.updateTag))
        let newDate = try #require(try? W3CDate(parsing: newUpdatedAt))
        let oldDate = try #require(try? W3CDate(parsing: updatedAt!))
        #expect(newDate.secondsSince1970 > oldDate.secondsSince1970)
        project.writeOrder("SO-1", status: "cancelled", shipping: "cancelled")
        _ = try build(project)
        let third = try #require(try orderJSON(project, "SO-1")["updatedAt"]?.stringValue)
        #expect(third > newUpdatedAt)
        #expect(
            second.passes["\(TestPKI.orderType)/SO-1"]!.updateTag > first.passes["\(TestPKI.orderType)/SO-1"]!.updateTag
        )
        // The order that did not change keeps its bytes, its ETag and its updatedAt.
        #expect(AtomicFileSystem.readFile("\(project.output)/v1/orders/\(TestPKI.orderType)/SO-2") == unchangedBytes)
        #expect(second.passes["\(TestPKI.orderType)/SO-2"] == first.passes["\(TestPKI.orderType)/SO-2"])
    }

    @Test func aCreatedAtInTheFutureIsRefusedByBuildAndValidateAtItsLine() throws {
        let project = project(orders: ["SO-1"])
        let json = try String(contentsOfFile: project.directory.file("templates/shop/order.json"), encoding: .utf8)
        project.directory.write(
            "templates/shop/order.json",
            json.replacingOccurrences(of: "2026-11-20T14:05:00+01:00", with: "2099-01-01T00:00:00Z"))
        let validate: () throws -> Void = {
            _ = try PassBuilder(settings: try project.buildSettings(secret: Self.secret)).validate()
        }
        for run in [validate, { _ = try build(project) }] {
            let failure = try #require(throws: BuildFailure.self) { try run() }
            let error = try #require(failure.diagnostics.first { $0.rule == "order.createdAt.future" })
            #expect(
                error.isError && error.location.file.hasSuffix("templates/shop/order.json") && error.location.line == 6)
        }
        #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: project.output)))
    }

    @Test(arguments: [
        "javascript:alert(1)", "http://shop.example.com/orders/SO-1", "data:text/html,x", "vbscript:msgbox(1)",
    ])
    func anOrderURLThatIsNotHTTPSIsRefusedByValidateAtItsLine(url: String) throws {
        let project = project(orders: [])
        project.directory.write(
            "content/orders/SO-1.yml",
            """
            template: shop
            orderIdentifier: SO-1
            data: { status: open, shipping: onTheWay }
            order:
              merchant: { url: "\(url)" }
            """)
        let failure = try #require(throws: BuildFailure.self) {
            try PassBuilder(settings: try project.buildSettings(secret: Self.secret)).validate()
        }
        let errors = failure.diagnostics.filter(\.isError)
        #expect(errors.map(\.rule) == ["order.url.https"], "\(errors)")
        #expect(
            errors.first?.location.file.hasSuffix("content/orders/SO-1.yml") == true && errors.first?.location.line == 5
        )
        #expect(errors.first?.keyPath == ["merchant", "url"])
        #expect(throws: BuildFailure.self) { try build(project) }
    }

    @Test func aRemovedOrderLeavesItsTokenForUnregistering() throws {
        let project = project()
        _ = try build(project)
        try FileManager.default.removeItem(atPath: project.directory.file("content/orders/SO-2.yml"))
        let report = try build(project)
        #expect(report.removed == ["\(TestPKI.orderType)/SO-2"])
        let state = try BuildState.load(from: project.output)
        #expect(state.removedPasses["\(TestPKI.orderType)/SO-2"]?.kind == .order)
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/v1/orders/\(TestPKI.orderType)/SO-2"))
    }

    @Test func aBadOrderIsRefusedAtItsLineAndNothingIsWritten() throws {
        let project = project(orders: [])
        project.writeOrder("SO-1", status: "shipped")
        let failure = try #require(throws: BuildFailure.self) { try build(project) }
        let error = try #require(failure.diagnostics.first { $0.isError })
        #expect(
            error.rule == "order.enum" && error.location.file.hasSuffix("content/orders/SO-1.yml")
                && error.location.line == 3)
        #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: project.output)))
    }

    @Test func aCertificateForAnotherTypeIsRefusedNamingBoth() throws {
        let project = project(orders: ["SO-1"])
        // Sign the orders with the pass type's certificate.
        let configuration = try String(contentsOfFile: project.directory.file("passforge.yml"), encoding: .utf8)
        let pass = TestPKI.shared.leaf()
        let order = TestPKI.shared.leaf(passType: TestPKI.orderType)
        project.directory.write(
            "passforge.yml",
            configuration.replacingOccurrences(of: order.certificate, with: pass.certificate)
                .replacingOccurrences(of: order.key, with: pass.key))
        let failure = try #require(throws: BuildFailure.self) { try build(project) }
        let error = try #require(failure.diagnostics.first { $0.rule == "signing.order-type" })
        #expect(
            error.message.contains(TestPKI.passType) && error.message.contains(TestPKI.orderType)
                && error.message.contains("Order Type ID"))
    }

    @Test func oneTypeIdentifierCannotNameAPassAndAnOrder() throws {
        let project = project(orders: [])
        let json = try String(contentsOfFile: project.directory.file("templates/shop/order.json"), encoding: .utf8)
        project.directory.write(
            "templates/shop/order.json", json.replacingOccurrences(of: TestPKI.orderType, with: TestPKI.passType))
        project.writeOrder("SO-1")
        let failure = try #require(throws: BuildFailure.self) { try build(project) }
        let error = try #require(failure.diagnostics.first { $0.rule == "content.type-kind" })
        #expect(error.message.contains(TestPKI.passType) && error.notes.count == 1)
    }
}
