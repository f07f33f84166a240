import Foundation
import PassPackage
import TestSupport
import Testing

/// `passforge inspect FILE.order`: the order's package and its rules, through the real binary.
@Suite struct OrderInspectTests {
    static let orderJSON = """
        {"schemaVersion": 1, "orderTypeIdentifier": "\(TestPKI.passType)", "orderIdentifier": "ORD-1", "orderType": "ecommerce",
         "orderManagementURL": "https://shop.example.com/orders/1", "status": "open", "orderNumber": "1",
         "createdAt": "2026-11-20T09:30:00Z", "updatedAt": "2026-11-21T09:30:00Z",
         "merchant": {"displayName": "Example Shop", "merchantIdentifier": "merchant.com.example", "url": "https://shop.example.com"},
         "lineItems": [{"title": "Espresso cups", "quantity": 2, "price": {"amount": "24.50", "currency": "USD"}}],
         "payment": {"total": {"amount": "24.50", "currency": "USD"}, "status": "paid"}}
        """

    /// A signed .order in a folder of its own (kept while the folder lives).
    func order(_ json: String, _ change: (inout [String: [UInt8]]) -> Void = { _ in }) throws -> (
        folder: TemporaryDirectory, path: String
    ) {
        let pki = TestPKI.shared
        let leaf = pki.leaf()
        let identity = try SigningIdentity(
            certificatePath: leaf.certificate, keyPath: leaf.key, wwdrCertificatePath: pki.wwdr)
        var files = ["order.json": Array(json.utf8)]
        var bytes = try PassPackager(signer: identity.makeSigner()).makeOrder(files: files)
        files = [:]
        for entry in try ZipArchive.read(bytes) { files[entry.name] = entry.bytes }
        var changed = files
        change(&changed)
        if changed != files {
            bytes = try ZipArchive.make(
                changed.sorted { $0.key < $1.key }.map { ZipEntry(name: $0.key, bytes: $0.value) })
        }
        let folder = TemporaryDirectory("order-inspect")
        return (folder, folder.write("test.order", bytes: bytes))
    }

    @Test func aValidOrderIsReadAndVerified() async throws {
        let order = try order(Self.orderJSON)
        let result = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["inspect", order.path, "--trusted-root", TestPKI.shared.root])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("order:        ORD-1") && result.output.contains("status:       open"))
        #expect(result.output.contains("sha256 ") && result.output.contains("chain: trusted"))
        #expect(result.output.contains("ok: no defects"))
    }

    @Test func aChangedFileABrokenRuleAndAWrongTypeAreDefects() async throws {
        let tampered = try order(Self.orderJSON) { files in files["order.json"]! += Array(" ".utf8) }
        var result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", tampered.path])
        #expect(
            result.status == 1 && result.output.contains("was changed after signing: manifest.json says SHA-256"),
            "\(result.output)")

        let broken = try order(
            Self.orderJSON.replacingOccurrences(of: #""status": "open""#, with: #""status": "shipped""#))
        result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", broken.path])
        #expect(result.status == 1 && result.output.contains("[order.enum]"), "\(result.output)")

        let otherType = try order(Self.orderJSON.replacingOccurrences(of: TestPKI.passType, with: "order.com.other"))
        result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", otherType.path])
        #expect(
            result.status == 1 && result.output.contains("order.json orderTypeIdentifier is \"order.com.other\""),
            "\(result.output)")
    }
}
