package import AtomicFiles
package import Foundation
package import PassModel

/// The output tree's index as its readers see it — the server, push, publish, `links`, `stats` and the
/// landing pages: every item the last committed build made and every item it removed, by `ItemKey`.
///
/// Decoded straight from `.passforge/state.json` (`PublishedIndex.load`), without what only the build reads
/// (the fingerprints, image paths and source files of its items, the content files): those stay in the
/// build's cache, `BuildState`. Immutable: a new build is a new index.
package struct PublishedIndex: Sendable {
    /// The greatest update tag ever given: the last build's (0 before the first).
    package let lastUpdateTag: Int64
    package let builtAt: String
    /// Every item of the build.
    package let items: [ItemKey: PublishedItem]
    /// The items builds removed: a device still holding one may unregister it, and the server's index of its
    /// device stops listing it.
    package let removedItems: [ItemKey: RemovedItem]
    /// The kind of each type identifier of the build and of the items it removed: a type names passes or
    /// orders, never both, so a request's type tells its kind even when its item is unknown.
    private let typeKinds: [String: WalletItemKind]
    /// How many of `items` are orders.
    package let orderCount: Int
    package var passCount: Int { items.count - orderCount }

    /// The index of no build (before the first).
    package init() {
        self.init(lastUpdateTag: 0, builtAt: "", items: [:], removedItems: [:])
    }

    package init(
        lastUpdateTag: Int64, builtAt: String, items: [ItemKey: PublishedItem], removedItems: [ItemKey: RemovedItem]
    ) {
        (self.lastUpdateTag, self.builtAt, self.items, self.removedItems) = (
            lastUpdateTag, builtAt, items, removedItems
        )
        var typeKinds: [String: WalletItemKind] = [:]
        var orderCount = 0
        for key in removedItems.keys { typeKinds[key.typeIdentifier] = key.kind }
        for key in items.keys {
            typeKinds[key.typeIdentifier] = key.kind
            if key.kind == .order { orderCount += 1 }
        }
        (self.typeKinds, self.orderCount) = (typeKinds, orderCount)
    }

    /// The index of the build's own cache, for a command that holds it already (`build --push`).
    package init(_ state: BuildState) {
        var items: [ItemKey: PublishedItem] = [:]
        items.reserveCapacity(state.passes.count)
        for record in state.passes.values { items[record.itemKey] = PublishedItem(record) }
        var removed: [ItemKey: RemovedItem] = [:]
        for record in state.removedPasses.values {
            removed[record.itemKey] = RemovedItem(
                key: record.itemKey, tokenHash: record.tokenHash, removedTag: record.removedTag,
                files: record.files)
        }
        self.init(lastUpdateTag: state.lastUpdateTag, builtAt: state.builtAt, items: items, removedItems: removed)
    }

    /// Passes or orders, by the kind of `typeIdentifier` in this build; nil for a type it does not know.
    package func kind(ofType typeIdentifier: some StringProtocol) -> WalletItemKind? {
        typeKinds[String(typeIdentifier)]
    }

    /// The key of `<type>/<identifier>` in this build (of a built or a removed item), when it knows the type.
    package func key(type: some StringProtocol, identifier: some StringProtocol) -> ItemKey? {
        kind(ofType: type).map { ItemKey(kind: $0, typeIdentifier: String(type), identifier: String(identifier)) }
    }

    /// The built item `<type>/<identifier>`, whichever its kind.
    package func item(type: some StringProtocol, identifier: some StringProtocol) -> PublishedItem? {
        key(type: type, identifier: identifier).flatMap { items[$0] }
    }

    /// The removed item `<type>/<identifier>`, whichever its kind.
    package func removedItem(type: some StringProtocol, identifier: some StringProtocol) -> RemovedItem? {
        key(type: type, identifier: identifier).flatMap { removedItems[$0] }
    }

    /// `items`' keys in the order of their text (the build's order).
    package var sortedKeys: [ItemKey] { items.keys.sorted() }
}

extension PublishedIndex: UpdateTags {
    package func updateTag(type: String, serial: String) -> (tag: Int64, kind: WalletItemKind)? {
        item(type: type, identifier: serial).map { ($0.updateTag, $0.kind) }
    }
}

/// One built item as its readers need it. A class with constant fields: an index of 100,000 items holds a
/// reference each, copies share it, and nothing can change it.
package final class PublishedItem: Sendable, Equatable, CustomStringConvertible {
    package let key: ItemKey
    package let teamIdentifier: String
    /// Milliseconds since 1970 of the build that last changed the item.
    package let updateTag: Int64
    private let packedETag: PackedDigest
    package let size: Int
    private let packedTokenHash: PackedDigest?
    package let templateName: String
    /// `download/<capability>.pkpass|.order`, relative to the output folder.
    package let downloadPath: String
    /// `download/<type>/<identifier>.pkpass|.order` (`download: public`), if any.
    package let publicDownloadPath: String?
    /// `by-token/<type>/<identifier>.<token>`; nil for an item without a web service.
    package let tokenPath: String?
    /// The DeviceCheck offer whose pool the pass is in, if any.
    package let offer: String?

    package init(
        key: ItemKey, teamIdentifier: String, updateTag: Int64, etag: PackedDigest, size: Int,
        tokenHash: PackedDigest?, templateName: String, downloadPath: String, publicDownloadPath: String?,
        tokenPath: String?, offer: String?
    ) {
        (self.key, self.teamIdentifier, self.updateTag, self.packedETag, self.size) = (
            key, teamIdentifier, updateTag, etag, size
        )
        (self.packedTokenHash, self.templateName, self.downloadPath) = (tokenHash, templateName, downloadPath)
        (self.publicDownloadPath, self.tokenPath, self.offer) = (publicDownloadPath, tokenPath, offer)
    }

    /// The readers' part of a record of the build's cache.
    package convenience init(_ record: BuildState.ItemRecord) {
        self.init(
            key: record.itemKey, teamIdentifier: record.teamIdentifier, updateTag: record.updateTag,
            etag: PackedDigest(record.etag), size: record.size, tokenHash: record.tokenHash.map(PackedDigest.init),
            templateName: record.templateName, downloadPath: record.downloadPath,
            publicDownloadPath: record.publicDownloadPath, tokenPath: record.tokenPath, offer: record.offer)
    }

    package var kind: WalletItemKind { key.kind }
    package var typeIdentifier: String { key.typeIdentifier }
    package var identifier: String { key.identifier }
    /// Strong ETag of the item's bytes, with its quotes: `"3f2a…"`.
    package var etag: String { packedETag.text }
    /// Hex SHA-256 of the authentication token; the token itself is never stored.
    package var tokenHash: String? { packedTokenHash?.text }
    /// `v1/passes/<type>/<serial>` or `v1/orders/<type>/<identifier>`.
    package var path: String { key.path }

    /// Every name of the item's bytes in the output tree: its path, then its download links and token name.
    package var files: [String] {
        [path, downloadPath] + [publicDownloadPath, tokenPath].compactMap { $0 }
    }

    package var description: String { key.text }

    package static func == (lhs: PublishedItem, rhs: PublishedItem) -> Bool {
        lhs === rhs
            || (lhs.key == rhs.key && lhs.teamIdentifier == rhs.teamIdentifier && lhs.updateTag == rhs.updateTag
                && lhs.packedETag == rhs.packedETag && lhs.size == rhs.size
                && lhs.packedTokenHash == rhs.packedTokenHash
                && lhs.templateName == rhs.templateName && lhs.downloadPath == rhs.downloadPath
                && lhs.publicDownloadPath == rhs.publicDownloadPath && lhs.tokenPath == rhs.tokenPath
                && lhs.offer == rhs.offer)
    }
}

/// An item a build removed, as its readers need it.
package struct RemovedItem: Sendable, Equatable {
    package let key: ItemKey
    /// Hex SHA-256 of its authentication token: Apple's DELETE of its registration is authenticated with it.
    package let tokenHash: String
    /// The update tag of the build that removed it.
    package let removedTag: Int64
    /// The names its bytes had in the tree; empty in a state written before removed items kept them.
    package let files: [String]

    package init(key: ItemKey, tokenHash: String, removedTag: Int64, files: [String]) {
        (self.key, self.tokenHash, self.removedTag, self.files) = (key, tokenHash, removedTag, files)
    }

    /// The names to delete at a destination: `files`, or its path alone when the state did not keep them.
    package var filesToDelete: [String] { files.isEmpty ? [key.path] : files }
}

// MARK: Loading

extension PublishedIndex {
    /// The index of the last build committed in `output`, or the empty index before the first build.
    package static func load(from output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount) throws
        -> PublishedIndex
    {
        let path = BuildState.path(in: output)
        guard let file = RegularFile(openingForReading: path) else {
            guard AtomicFileSystem.exists(path) else { return PublishedIndex() }
            throw BuildError(.unreadable, "cannot read \(path); check its permissions")
        }
        guard let bytes = file.readAll() else {
            throw BuildError(.unreadable, "cannot read \(path) whole; check the disk")
        }
        return try decode(bytes, of: output, jobs: jobs)
    }

    /// The index in the bytes of `output`'s state file, already read.
    package static func decode(
        _ bytes: [UInt8], of output: String,
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> PublishedIndex {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(BuildStateDecoding.Failure) in
                try PublishedIndexDecoding.decode(buffer: buffer, jobs: jobs)
            }
        } catch {
            throw unreadable(error, path: BuildState.path(in: output))
        }
    }

    /// The error for people of a local state file at `path` that failed to decode.
    static func unreadable(_ failure: BuildStateDecoding.Failure, path: String) -> BuildError {
        if let version = failure.version {
            return BuildError(
                .unreadable,
                "\(path) was written by another passforge version (state version \(version)); "
                    + "build again with this version")
        }
        return BuildError(.unreadable, "\(path) is damaged (\(failure)); build again to write it anew")
    }
}
