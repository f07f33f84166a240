import PassModel
import Testing
import WalletTree

@Suite struct ItemKeyTests {
    @Test func textAndParsingAgree() {
        let key = ItemKey(kind: .order, typeIdentifier: "order.com.example", identifier: "O-1")
        #expect(key.text == "order.com.example/O-1")
        #expect(ItemKey(key.text, kind: .order) == key)
        #expect(ItemKey("no-slash", kind: .pass) == nil)
        #expect(
            ItemKey.split("pass.a/S/1").map { [String($0.typeIdentifier), String($0.identifier)] } == ["pass.a", "S/1"])
        #expect(key.path == "v1/orders/order.com.example/O-1")
        #expect(ItemKey.pass("pass.a", "S-1").path == "v1/passes/pass.a/S-1")
    }

    /// The keys sort as their text does: the order the build writes its records in.
    @Test func keysSortAsTheirText() {
        let keys = [
            ("pass.a.b", "1"), ("pass.a", "z"), ("pass.a", "Z"), ("pass.a-b", "1"), ("pass", "a.b"), ("pass.a", "1~"),
        ]
        .map { ItemKey.pass($0.0, $0.1) }
        #expect(keys.sorted().map(\.text) == keys.map(\.text).sorted())
    }

    /// A record's fields are shared by copies and copied on the first change: changing a copy never changes
    /// the record it was copied from, whatever field it changes.
    @Test func aChangedCopyLeavesTheOriginal() {
        let original = BuildState.ItemRecord(
            typeIdentifier: "pass.a", identifier: "S-1", teamIdentifier: "T", updateTag: 1, etag: "\"e\"", size: 1,
            fingerprint: "f",
            definitionHash: "d", templateName: "t", imagePaths: ["i"], sourceFile: "s",
            downloadPath: "download/c.pkpass")
        let changes: [(inout BuildState.ItemRecord) -> Void] = [
            { $0.typeIdentifier = "x" }, { $0.identifier = "x" }, { $0.teamIdentifier = "x" }, { $0.updateTag = 2 },
            { $0.etag = "x" }, { $0.size = 2 }, { $0.tokenHash = "x" }, { $0.fingerprint = "x" },
            { $0.definitionHash = "x" },
            { $0.templateName = "x" }, { $0.imagePaths = [] }, { $0.sourceFile = "x" }, { $0.downloadPath = "x" },
            { $0.publicDownloadPath = "x" }, { $0.tokenPath = "x" }, { $0.offer = "x" }, { $0.kind = .order },
        ]
        for change in changes {
            let before = original
            var copy = original
            change(&copy)
            #expect(copy != original)
            #expect(original == before)
            #expect(
                original.typeIdentifier == "pass.a" && original.size == 1 && original.kind == .pass
                    && original.tokenHash == nil)
        }
    }
}
