import AtomicFiles
import Foundation
import WalletTree

#if canImport(Glibc)
    import Glibc
#endif

/// Publishing to a folder on this machine (or a mounted volume).
///
/// DEST itself may be a symbolic link (to where the site is served from);
/// inside it, passforge never writes, deletes or reads its state through one:
/// every folder on the way to a file it touches is checked with lstat to be a
/// real folder (once per folder: 100,000 passes share a few), its files are
/// made with O_EXCL and replaced by rename (which replaces a link, never
/// follows it), and the state files are opened with O_NOFOLLOW.
struct DirectoryTransport: PublishTransport {
    var root: String

    func fetchState() throws -> DestinationState {
        // DEST may be a link to the folder the site is served from.
        guard let kind = AtomicFileSystem.entryKind(root, followingLinks: true) else { return .missingFolder }
        guard kind == .directory else {
            throw PublishError(.unsafePath, "\(root) is a file, not a folder; publish to a folder")
        }
        var folders = RealFolders(root: root)
        guard try folders.exists(TreeLayout.stateFolder, creating: false),
            let state = try readStateFile(TreeLayout.statePath, limit: BuildState.maximumPublishedSize)
        else { return .noState }
        let bundles = try readStateFile(BundleList.path, limit: BuildState.maximumPublishedListSize)
        let csv = try readStateFile(TreeLayout.downloadsListPath, limit: BuildState.maximumPublishedListSize)
        let landing = try readStateFile(LandingPageList.path, limit: BuildState.maximumPublishedListSize)
        let downloads = bundles == nil && landing == nil ? [] : try downloadFiles(&folders)
        var build = PublishedBuild(
            state: state, downloadsCSV: csv, bundlesJSON: bundles,
            bundleFiles: bundles == nil ? [] : downloads.filter { $0.hasSuffix(".pkpasses") },
            landingPages: landing,
            landingFiles: landing == nil ? [] : downloads.filter(LandingComparison.isLandingFile))
        let note = try readStateFile(Self.removalsNotePath, limit: BuildState.maximumPublishedListSize)
        build.notedRemovals = note.flatMap { try? JSONDecoder().decode([String].self, from: Data($0)) } ?? []
        return .published(build)
    }

    /// The files a publish will delete once its state is sent, written before the state and removed after the
    /// deletions (as in a bucket): see `PublishedBuild.notedRemovals`.
    static let removalsNotePath = "\(TreeLayout.stateFolder)/publish-removals.json"

    func noteRemovals(_ paths: [String]) throws {
        var folders = RealFolders(root: root)
        _ = try folders.exists(TreeLayout.stateFolder, creating: true)
        try AtomicFileSystem.write(
            Array(try JSONEncoder().encode(paths)), to: TreeLayout.path(Self.removalsNotePath, in: root))
    }

    /// A file of `.passforge/`: a regular file, not a link, of at most `limit` bytes (no more is read); nil when missing.
    private func readStateFile(_ name: String, limit: Int) throws -> [UInt8]? {
        let path = TreeLayout.path(name, in: root)
        guard let kind = AtomicFileSystem.entryKind(path) else { return nil }
        guard kind == .regularFile, let file = RegularFile(openingForReading: path, followingLinks: false) else {
            throw PublishError(
                .unsafePath,
                "\(path) is \(kind == .symbolicLink ? "a symbolic link" : "not a regular file"); passforge reads the published state only from regular files inside \(root): replace it with the file, or publish again"
            )
        }
        guard file.stamp.size <= limit else {
            throw PublishError(
                .tooLarge,
                "\(path) is \(file.stamp.size >> 20) MB, more than the \(limit >> 20) MB a published build's \((name as NSString).lastPathComponent) may be; it is refused"
            )
        }
        guard let bytes = file.readAll() else { throw PublishError(.fileSystem, "cannot read \(path)") }
        return bytes
    }

    /// `download/*.pkpasses` and the landing files (`download/*.html|.png|.svg`), relative to the root.
    private func downloadFiles(_ folders: inout RealFolders) throws -> [String] {
        guard try folders.exists(TreeLayout.downloadFolder, creating: false) else { return [] }
        let names =
            AtomicFileSystem.directoryEntries(TreeLayout.path(TreeLayout.downloadFolder, in: root))?.map(\.name) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".pkpass") && !$0.hasSuffix(".order") }.sorted()
            .map { "\(TreeLayout.downloadFolder)/\($0)" }
    }

    func createDestination() throws {
        try AtomicFileSystem.createDirectory(root)
    }

    func lockDestination() throws -> (any DestinationLock)? {
        var folders = RealFolders(root: root)
        _ = try folders.exists(TreeLayout.stateFolder, creating: true)
        let path = TreeLayout.path(TreeLayout.publishLockPath, in: root)
        do {
            guard let lock = try FileLock.acquire(path, blocking: false) else {
                throw PublishError(
                    .locked,
                    "another passforge publish to \(root) is running (\(path) is locked); wait for it to finish")
            }
            return lock
        } catch let failure as AtomicFileSystem.Failure {
            throw PublishError(.fileSystem, failure.description, underlying: failure)
        }
    }

    /// Writes every file under a hidden name beside its place, flushes them
    /// all with one sync, then renames them into place and links them. A
    /// kill leaves at most the hidden files, which the next run overwrites.
    func upload(_ files: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws {
        guard !files.isEmpty else { return }
        var folders = RealFolders(root: root)
        for upload in files {
            let source = "\(localRoot)/\(upload.path)"
            guard let file = RegularFile(openingForReading: source), let bytes = file.readAll() else {
                throw PublishError(.localTreeMismatch, "cannot read \(source); run passforge build first")
            }
            let stamp = file.stamp
            _ = try folders.exists(Self.folder(of: upload.path), creating: true)
            let staged = Self.stagedPath(for: TreeLayout.path(upload.path, in: root))
            // A name left by a killed run, or planted: removed, and the file made anew (O_EXCL does not follow a link).
            try AtomicFileSystem.remove(staged)
            try AtomicFileSystem.writeFile(bytes, to: staged, sync: false, exclusive: true)
            try setModificationTime(of: staged, seconds: stamp.modifiedSeconds, nanoseconds: stamp.modifiedNanoseconds)
        }
        for link in files.flatMap(\.links) { _ = try folders.exists(Self.folder(of: link), creating: true) }
        try AtomicFileSystem.syncFileSystem(containing: root)
        var landed = 0
        for upload in files {
            let destination = TreeLayout.path(upload.path, in: root)
            try AtomicFileSystem.rename(Self.stagedPath(for: destination), to: destination)
            for link in upload.links { try Self.link(destination, as: TreeLayout.path(link, in: root)) }
            landed += upload.fileCount
            progress(landed)
        }
        try AtomicFileSystem.syncFileSystem(containing: root)
    }

    func uploadState(_ names: [String], from localRoot: String) throws {
        var folders = RealFolders(root: root)
        for name in names {
            let source = "\(localRoot)/\(name)"
            guard let bytes = AtomicFileSystem.readFile(source) else {
                throw PublishError(.localTreeMismatch, "cannot read \(source); run passforge build first")
            }
            _ = try folders.exists(Self.folder(of: name), creating: true)
            try AtomicFileSystem.write(bytes, to: TreeLayout.path(name, in: root))
        }
    }

    /// Deletes in real folders only: a path under a link (or under a folder that is gone) is left alone.
    func remove(_ paths: [String], emptyFolders folders: [String]) throws {
        var real = RealFolders(root: root)
        for path in paths where try real.exists(Self.folder(of: path), creating: false) {
            try AtomicFileSystem.remove(TreeLayout.path(path, in: root))
        }
        for folder in folders where try real.exists(Self.folder(of: folder), creating: false) {
            if AtomicFileSystem.entryKind(TreeLayout.path(folder, in: root)) == .directory {
                removeFolderIfEmpty(TreeLayout.path(folder, in: root))
            }
        }
        try AtomicFileSystem.remove(TreeLayout.path(Self.removalsNotePath, in: root))
    }

    /// Links `target` as `link`. A name already there is replaced through a hard link made under the
    /// link's staged dotname, then renamed over it: not AtomicFileSystem.hardLink's `NAME.tmp-<pid>-<n>`,
    /// which a publish killed between its link and its rename left beside the token names and downloads,
    /// served, under a name no later publish knew (the host then held a file the build does not). The
    /// staged name is the same on every run, so the next run removes what a killed one left, and a dotfile
    /// is never served meanwhile.
    static func link(_ target: String, as link: String) throws(PublishError) {
        if Glibc.link(target, link) == 0 { return }
        guard errno == EEXIST else { throw linkFailure(target, link) }
        let staged = stagedPath(for: link)
        if unlink(staged) != 0, errno != ENOENT { throw linkFailure(target, staged) }
        guard Glibc.link(target, staged) == 0 else { throw linkFailure(target, staged) }
        guard Glibc.rename(staged, link) == 0 else { throw linkFailure(staged, link) }
    }

    private static func linkFailure(_ target: String, _ link: String) -> PublishError {
        PublishError(
            .fileSystem,
            "cannot link \(target) as \(link): \(String(cString: strerror(errno))); check the destination's "
                + "permissions and free space, then publish again")
    }

    /// `v1/passes/T/S` → `v1/passes/T`; `x` → "".
    static func folder(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    /// `v1/passes/T/S` → `v1/passes/T/.S.publishing`: a dotfile, which no host serves.
    static func stagedPath(for path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return "\(folder)/.\((path as NSString).lastPathComponent).publishing"
    }
}

/// Sets a file's access and modification times to the nanosecond (a candidate for AtomicFiles).
private func setModificationTime(of path: String, seconds: Int, nanoseconds: Int) throws(PublishError) {
    let time = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
    let times = [time, time]
    guard utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0 else {
        throw PublishError(
            .fileSystem, "cannot set the modification time of \(path): \(String(cString: strerror(errno)))")
    }
}

/// rmdir(2): removes a folder only when it is empty (a candidate for AtomicFiles).
private func removeFolderIfEmpty(_ path: String) {
    _ = rmdir(path)
}

/// The folders inside a destination that passforge has seen to be real
/// folders (lstat, no symbolic link), each checked once: the root's own path
/// may hold links, nothing under it may.
struct RealFolders {
    let root: String
    private var checked = Set<String>()

    init(root: String) { self.root = root }

    /// Whether `folder` (relative to the root; "" is the root) and each folder
    /// above it are real folders; missing ones are made when `creating`, else
    /// the answer is false. A link or a file on the way is an error.
    mutating func exists(_ folder: String, creating: Bool) throws(PublishError) -> Bool {
        guard !folder.isEmpty, !checked.contains(folder) else { return true }
        var current = ""
        for part in folder.split(separator: "/") {
            current = current.isEmpty ? String(part) : "\(current)/\(part)"
            if checked.contains(current) { continue }
            let path = TreeLayout.path(current, in: root)
            var kind = AtomicFileSystem.entryKind(path)
            if kind == nil, creating {
                if mkdir(path, 0o755) != 0, errno != EEXIST {
                    throw PublishError(.fileSystem, "cannot create folder \(path): \(String(cString: strerror(errno)))")
                }
                kind = AtomicFileSystem.entryKind(path)
            }
            switch kind {
            case .directory?: checked.insert(current)
            case nil: return false
            case .symbolicLink?:
                throw PublishError(
                    .unsafePath,
                    "\(path) is a symbolic link; passforge does not write, delete or read through links inside \(root) (they could point anywhere): replace it with a real folder"
                )
            default:
                throw PublishError(.unsafePath, "\(path) is not a folder; move it away, then publish again")
            }
        }
        return true
    }
}
