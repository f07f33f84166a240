import AtomicFiles
package import RegistrationStore

extension DeviceIndexFiles {
    /// `.passforge/indexed-tag`: the last update tag whose changes the index
    /// files already show, so that a server that was stopped while builds
    /// were published catches up on exactly what it missed.
    package var indexedTagPath: String { TreeLayout.path(TreeLayout.indexedTagPath, in: outputDirectory) }

    /// After a build: rewrites the index files of the devices holding the
    /// items it changed or removed (`changed`, keys), from the store's
    /// registrations and the state the build committed (handed over, not read
    /// again), so that the tags and identifier lists a static host serves
    /// follow the new build. Returns the number of index files written or removed.
    @discardableResult
    package func refresh(changed: [String], committed state: BuildState, store: any RegistrationStore) async throws
        -> Int
    {
        guard !changed.isEmpty else { return 0 }
        let count = try await refresh(passes: changed, store: store, snapshot: state)
        try recordIndexed(lastUpdateTag: state.lastUpdateTag)
        return count
    }

    /// For a server whose tree receives builds from elsewhere (`passforge
    /// publish`): rewrites the index files of the devices holding passes
    /// changed or removed since the last build whose indices were refreshed.
    /// The first time (no record yet) it only takes note of the build: the
    /// index files were written by the registrations themselves.
    @discardableResult
    package func refresh(publishedBuild index: PublishedIndex, store: any RegistrationStore) async throws -> Int {
        guard let indexed = indexedTag() else {
            try recordIndexed(lastUpdateTag: index.lastUpdateTag)
            return 0
        }
        guard index.lastUpdateTag > indexed else { return 0 }
        let changed =
            index.items.values.filter { $0.updateTag > indexed }.map(\.key.text)
            + index.removedItems.values.filter { $0.removedTag > indexed }.map(\.key.text)
        let count = changed.isEmpty ? 0 : try await refresh(passes: changed, store: store, snapshot: index)
        try recordIndexed(lastUpdateTag: index.lastUpdateTag)
        return count
    }

    package func indexedTag() -> Int64? {
        AtomicFileSystem.readFile(indexedTagPath).flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
    }

    /// Notes that the index files show every change up to `lastUpdateTag`, a build's.
    package func recordIndexed(lastUpdateTag: Int64) throws {
        try AtomicFileSystem.write(Array(String(lastUpdateTag).utf8), to: indexedTagPath)
    }
}
