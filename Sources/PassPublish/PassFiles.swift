import WalletTree

/// The files of one pass in the tree: the pass file, and the names that are
/// hard links to the same bytes (token link, download links).
struct PassFiles: Sendable, Equatable {
    /// `v1/passes/<type>/<serial>`.
    var passPath: String
    var linkPaths: [String]

    var allPaths: [String] { [passPath] + linkPaths }

    init(_ record: BuildState.ItemRecord) {
        passPath = record.path
        linkPaths = record.files.filter { $0 != record.path }
    }

    /// The names a removed pass had; a state written before removed passes
    /// kept them knows only the pass file.
    static func paths(of removed: BuildState.RemovedItemRecord) -> [String] {
        removed.files.isEmpty ? [TreeLayout.itemPath(kind: removed.kind, type: removed.passTypeIdentifier, identifier: removed.serialNumber)] : removed.files
    }
}
