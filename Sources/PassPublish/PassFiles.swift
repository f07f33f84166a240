import WalletTree

/// The files of one pass in the tree: the pass file, and the names that are
/// hard links to the same bytes (token link, download links).
struct PassFiles: Sendable, Equatable {
    /// `v1/passes/<type>/<serial>`.
    var passPath: String
    var linkPaths: [String]

    var allPaths: [String] { [passPath] + linkPaths }

    init(_ item: PublishedItem) {
        passPath = item.path
        linkPaths = item.files.filter { $0 != item.path }
    }

    /// The names a removed pass had; a state written before removed passes
    /// kept them knows only the pass file.
    static func paths(of removed: RemovedItem) -> [String] {
        removed.filesToDelete
    }
}
