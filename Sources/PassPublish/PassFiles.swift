import PassBuild

/// The files of one pass in the tree: the pass file, and the names that are
/// hard links to the same bytes (token link, download links).
struct PassFiles: Sendable, Equatable {
    /// `v1/passes/<type>/<serial>`.
    var passPath: String
    var linkPaths: [String]

    var allPaths: [String] { [passPath] + linkPaths }

    init(_ record: BuildState.PassRecord) {
        passPath = record.path
        linkPaths = [Self.tokenPath(of: record), record.downloadPath, record.publicDownloadPath].compactMap { $0 }
    }

    /// The paths still known for a pass a build removed.
    static func paths(of removed: BuildState.RemovedPassRecord) -> [String] {
        ["v1/passes/\(removed.passTypeIdentifier)/\(removed.serialNumber)"]
    }

    /// `by-token/<type>/<serial>.<token>`, once the build records it in the state.
    /// The one place to switch to `record.tokenPath`.
    static func tokenPath(of record: BuildState.PassRecord) -> String? {
        nil
    }
}
