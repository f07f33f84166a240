import Testing
@testable import PassPush
import RegistrationStore
import WalletTree
import PassModel

/// `push` says how many passes and how many orders changed, each by the kind its state record gives.
@Suite struct ChangedItemsTests {
    @Test func passesAndOrdersAreCountedByTheirRecordsKind() {
        var state = BuildState()
        func record(_ type: String, _ identifier: String, kind: WalletItemKind) -> BuildState.ItemRecord {
            .init(passTypeIdentifier: type, serialNumber: identifier, teamIdentifier: "T", updateTag: 1, etag: "e", size: 1, fingerprint: "f",
                  definitionHash: "d", templateName: "t", imagePaths: [], sourceFile: "s", downloadPath: "download/x.pkpass", kind: kind)
        }
        for item in [record("pass.x", "A", kind: .pass), record("pass.x", "B", kind: .pass), record("order.x", "O1", kind: .order)] {
            state.passes[item.key] = item
        }
        state.removedPasses["order.x/O2"] = .init(passTypeIdentifier: "order.x", serialNumber: "O2", tokenHash: "h", removedTag: 2, kind: .order)
        let items = ["pass.x/A", "pass.x/B", "order.x/O1", "order.x/O2"].map {
            PassReference(passTypeIdentifier: String($0.split(separator: "/")[0]), serialNumber: String($0.split(separator: "/")[1]))
        }
        let changed = ChangedItems(items, in: state)
        #expect(changed == ChangedItems(passes: 2, orders: 2))
        #expect(changed.description == "2 changed passes and 2 changed orders")
        #expect(ChangedItems(Array(items.prefix(1)), in: state).description == "1 changed pass")
        #expect(ChangedItems(passes: 0, orders: 1).description == "0 changed passes and 1 changed order")
    }
}
