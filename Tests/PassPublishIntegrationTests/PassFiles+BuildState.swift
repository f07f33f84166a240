import WalletTree

@testable import PassPublish

/// The tests hold the build's state (`BuildState`); a publish reads the readers' index of it.
extension PassFiles {
    init(_ record: BuildState.ItemRecord) { self.init(PublishedItem(record)) }

    static func paths(of removed: BuildState.RemovedItemRecord) -> [String] {
        paths(
            of: RemovedItem(
                key: removed.itemKey, tokenHash: removed.tokenHash, removedTag: removed.removedTag, files: removed.files
            ))
    }
}
