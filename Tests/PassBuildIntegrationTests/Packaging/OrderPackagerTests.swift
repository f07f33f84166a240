import Foundation
import PassPackage
import TestSupport
import Testing

/// The bytes of a `.order`: SHA-256 manifest, detached CMS signature, the same zip as a pass.
struct OrderPackagerTests {
    let pki = TestPKI.withSigningFormats()

    static let files: [String: [UInt8]] = [
        "order.json": Array(#"{"schemaVersion":1,"orderIdentifier":"ORD-1"}"#.utf8),
        "logo.png": Array("not really a png, but bytes to hash".utf8),
        "fr.lproj/order.strings": Array("\"Title\" = \"Tasses\";".utf8),
    ]

    @Test func opensslVerifiesAnOrderAndItsManifestIsSHA256() async throws {
        let signingTime = Date(timeIntervalSince1970: 1_780_000_000)
        let order = try PassPackager(signer: pki.identity().makeSigner()).makeOrder(
            files: Self.files, signingTime: signingTime)
        let directory = try makeTemporaryDirectory("order")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(order, to: directory + "/test.order")
        try await run("unzip", ["-q", "test.order", "-d", "out"], in: directory)
        let verified = try await run(
            "openssl",
            [
                "cms", "-verify", "-binary", "-inform", "DER", "-in", "out/signature",
                "-content", "out/manifest.json", "-CAfile", pki.path("root.pem"),
                "-purpose", "any", "-out", "/dev/null",
            ], in: directory, check: false)
        #expect(verified.status == 0, "\(verified.error)")
        let manifest = try Manifest(jsonBytes: readBytes(directory + "/out/manifest.json"))
        #expect(manifest.hashes.keys.sorted() == ["fr.lproj/order.strings", "logo.png", "order.json"])
        for (name, hash) in manifest.hashes {
            let digest = try await run("openssl", ["dgst", "-sha256", "-r", "out/" + name], in: directory).output
            #expect(hash.count == 64 && String(digest.prefix(64)) == hash, "\(name)")
        }
        let entries = try ZipArchive.read(order).map(\.name)
        #expect(entries == ["order.json", "fr.lproj/order.strings", "logo.png", "manifest.json", "signature"])
        // The signature carries its signing time, as for passes.
        let attributes = try await run(
            "openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", "out/signature"], in: directory
        ).output
        #expect(attributes.contains("signingTime"))
    }

    @Test func anOrderNeedsOrderJSONAndFilesPreparedForOrders() async throws {
        let packager = PassPackager(signer: try pki.identity().makeSigner())
        #expect(throws: PassPackageError.self) { try packager.makeOrder(files: ["logo.png": [1, 2, 3]]) }
        let forAPass = try PreparedPassFile(name: "logo.png", bytes: [1, 2, 3])
        #expect(throws: PassPackageError.self) {
            try packager.makeOrder(orderJSON: Array("{}".utf8), files: [forAPass], signingTime: Date())
        }
        #expect(throws: PassPackageError.self) { try PreparedPassFile(name: "order.json", bytes: [], digest: .sha256) }
    }
}
