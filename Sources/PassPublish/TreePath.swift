import WalletTree

/// The relative paths a publish may write or delete: the build-owned part of
/// the output tree (`TreeLayout`, the rule the build's own journal checks
/// too), and nothing else. Every path taken from a build state (ours, or the
/// one read from the destination) is checked before any file is touched or
/// any command is run, so a damaged or hostile state cannot reach
/// `v1/devices/`, `.passforge/` or anything outside the tree.
enum TreePath {
    static func check(_ path: String) throws(PublishError) {
        guard isBuildOwned(path) else {
            throw PublishError(
                .unsafePath,
                "refusing to touch \(BuildState.quoted(path)): it is not a pass, token link, download or bundle path of the output tree; the build state (or bundles.json) that lists it is damaged"
            )
        }
    }

    static func isBuildOwned(_ path: String) -> Bool { TreeLayout.isBuildOwned(path) }
}
