import RegistrationStore

extension DeviceIndexFiles {
    /// After a build: rewrites the index files of the devices holding the
    /// passes it changed or removed, from the store's registrations and the
    /// committed build state, so that `lastUpdated` and the serial lists a
    /// static host serves follow the new build. Returns the number of index
    /// files written or removed.
    @discardableResult
    public func refresh(after report: BuildReport, store: any RegistrationStore) async throws -> Int {
        let changed = report.built + report.removed
        guard !changed.isEmpty else { return 0 }
        let state = try BuildState.load(from: outputDirectory)
        return try await refresh(passes: changed, store: store, snapshot: state)
    }
}
