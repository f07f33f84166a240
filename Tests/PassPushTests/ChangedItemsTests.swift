import PassModel
import RegistrationStore
import Testing
import WalletTree

@testable import PassPush

/// `push` says how many passes and how many orders changed, each by the kind its state record gives.
@Suite struct ChangedItemsTests {
    @Test func passesAndOrdersAreCountedByTheirRecordsKind() {
        var state = BuildState()
        func record(_ type: String, _ identifier: String, kind: WalletItemKind) -> BuildState.ItemRecord {
            .init(
                typeIdentifier: type, identifier: identifier, teamIdentifier: "T", updateTag: 1, etag: "e", size: 1,
                fingerprint: "f",
                definitionHash: "d", templateName: "t", imagePaths: [], sourceFile: "s",
                downloadPath: "download/x.pkpass", kind: kind)
        }
        for item in [
            record("pass.x", "A", kind: .pass), record("pass.x", "B", kind: .pass),
            record("order.x", "O1", kind: .order),
        ] {
            state.passes[item.key] = item
        }
        state.removedPasses["order.x/O2"] = .init(
            typeIdentifier: "order.x", identifier: "O2", tokenHash: "h", removedTag: 2, kind: .order)
        let items = [("pass.x", "A"), ("pass.x", "B"), ("order.x", "O1"), ("order.x", "O2")].map {
            PassReference(passTypeIdentifier: $0.0, serialNumber: $0.1)
        }
        let index = PublishedIndex(state)
        let changed = ChangedItems(items, in: index)
        #expect(changed == ChangedItems(passes: 2, orders: 2))
        #expect(changed.description == "2 changed passes and 2 changed orders")
        #expect(ChangedItems(Array(items.prefix(1)), in: index).description == "1 changed pass")
        #expect(ChangedItems(passes: 0, orders: 1).description == "0 changed passes and 1 changed order")
    }
}
