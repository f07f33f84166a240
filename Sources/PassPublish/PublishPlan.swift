import PassBuild

/// What a publish sends and deletes: the difference between the local build
/// state and the destination's, pass by pass.
struct PublishPlan: Sendable {
    var uploads: [PassUpload] = []
    /// Files to delete after the state is sent.
    var removals: [String] = []
    /// Pass-type folders that may be left empty by the removals.
    var foldersToPrune: [String] = []
    /// Passes the destination lists and the local build does not.
    var removedPasses = 0

    /// A pass is sent when the destination has no record of it, or one with
    /// another ETag, update tag or set of files. Deleted: the files of passes
    /// the destination lists and the local build does not, the files a pass
    /// no longer has, and the files of the passes the local build removed
    /// since the destination's build — again, in case a publish was killed
    /// between sending the state and deleting them.
    init(local: BuildState, destination: BuildState?) throws(PublishError) {
        for key in local.passes.keys.sorted() {
            let record = local.passes[key]!
            let files = PassFiles(record)
            let previous = destination?.passes[key]
            let previousFiles = previous.map(PassFiles.init)
            if let previous, let previousFiles, previous.etag == record.etag, previous.updateTag == record.updateTag, previousFiles == files {
                continue
            }
            let existing = Set(previousFiles?.allPaths ?? [])
            uploads.append(PassUpload(passPath: files.passPath, newLinks: files.linkPaths.filter { !existing.contains($0) },
                                      replacedLinks: files.linkPaths.filter(existing.contains), size: record.size))
            if let previousFiles {
                removals += previousFiles.allPaths.filter { !files.allPaths.contains($0) }
            }
        }
        if let destination {
            for key in destination.passes.keys.sorted() where local.passes[key] == nil {
                removals += PassFiles(destination.passes[key]!).allPaths
                removedPasses += 1
            }
        }
        let since = destination?.lastUpdateTag ?? 0
        for key in local.removedPasses.keys.sorted() where local.removedPasses[key]!.removedTag >= since {
            removals += PassFiles.paths(of: local.removedPasses[key]!)
        }
        if !removals.isEmpty {
            // Never delete a name the local build still uses.
            let kept = Set(local.passes.values.flatMap { PassFiles($0).allPaths })
            var seen = Set<String>()
            removals = removals.filter { !kept.contains($0) && seen.insert($0).inserted }
        }
        for upload in uploads { try TreePath.check(upload.passPath); for link in upload.links { try TreePath.check(link) } }
        for path in removals { try TreePath.check(path) }
        foldersToPrune = Set(removals.compactMap(Self.passTypeFolder)).sorted()
    }

    var fileCount: Int { uploads.reduce(0) { $0 + $1.fileCount } }
    var byteCount: Int { uploads.reduce(0) { $0 + $1.size } }

    /// `v1/passes/T/S` → `v1/passes/T`, `by-token/T/x` → `by-token/T`,
    /// `download/T/S.pkpass` → `download/T`; nil for `download/<capability>.pkpass`.
    static func passTypeFolder(of path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count >= 3 else { return nil }
        return parts.dropLast().joined(separator: "/")
    }
}
