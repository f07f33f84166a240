import AtomicFiles
import Foundation
import PassBuild
#if canImport(Glibc)
import Glibc
#endif

/// Publishing to a folder on this machine (or a mounted volume).
struct DirectoryTransport: PublishTransport {
    var root: String

    func fetchState() throws -> DestinationState {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else { return .missingFolder }
        guard isDirectory.boolValue else { throw PublishError("\(root) is a file, not a folder; publish to a folder") }
        guard let state = AtomicFileSystem.readFile(BuildState.path(in: root)) else { return .noState }
        let bundles = AtomicFileSystem.readFile("\(root)/\(BundleList.path)")
        return .published(PublishedBuild(state: state, downloadsCSV: AtomicFileSystem.readFile("\(root)/.passforge/downloads.csv"),
                                         bundlesJSON: bundles, bundleFiles: bundles == nil ? [] : bundleFiles()))
    }

    /// `download/*.pkpasses`, relative to the root.
    private func bundleFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/download")) ?? []
        return names.filter { $0.hasSuffix(".pkpasses") && !$0.hasPrefix(".") }.sorted().map { "download/\($0)" }
    }

    func createDestination() throws {
        try AtomicFileSystem.createDirectory(root)
    }

    func lockDestination() throws -> FileLock? {
        let path = "\(root)/.passforge/publish.lock"
        do {
            guard let lock = try FileLock.acquire(path, blocking: false) else {
                throw PublishError("another passforge publish to \(root) is running (\(path) is locked); wait for it to finish")
            }
            return lock
        } catch let failure as FileLock.Failure {
            throw PublishError(failure.description)
        }
    }

    /// Writes every file under a hidden name beside its place, flushes them
    /// all with one sync, then renames them into place and links them. A
    /// kill leaves at most the hidden files, which the next run overwrites.
    func upload(_ files: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws {
        guard !files.isEmpty else { return }
        for upload in files {
            let source = "\(localRoot)/\(upload.path)"
            guard let file = RegularFile(openingForReading: source), let bytes = file.readAll() else {
                throw PublishError("cannot read \(source); run passforge build first")
            }
            let identity = file.identity
            let destination = "\(root)/\(upload.path)"
            try AtomicFileSystem.createDirectory((destination as NSString).deletingLastPathComponent)
            let staged = Self.stagedPath(for: destination)
            try AtomicFileSystem.writeFile(bytes, to: staged, sync: false)
            try setModificationTime(of: staged, seconds: identity.modifiedSeconds, nanoseconds: identity.modifiedNanoseconds)
        }
        try AtomicFileSystem.syncFileSystem(containing: root)
        var landed = 0
        for upload in files {
            let destination = "\(root)/\(upload.path)"
            try AtomicFileSystem.rename(Self.stagedPath(for: destination), to: destination)
            for link in upload.links {
                try AtomicFileSystem.hardLink(destination, as: "\(root)/\(link)")
            }
            landed += upload.fileCount
            progress(landed)
        }
        try AtomicFileSystem.syncFileSystem(containing: root)
    }

    func uploadState(_ names: [String], from localRoot: String) throws {
        for name in names {
            let source = "\(localRoot)/\(name)"
            guard let bytes = AtomicFileSystem.readFile(source) else {
                throw PublishError("cannot read \(source); run passforge build first")
            }
            try AtomicFileSystem.write(bytes, to: "\(root)/\(name)")
        }
    }

    func remove(_ paths: [String], emptyFolders folders: [String]) throws {
        for path in paths { try AtomicFileSystem.remove("\(root)/\(path)") }
        for folder in folders { removeFolderIfEmpty("\(root)/\(folder)") }
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
    guard utimensat(AT_FDCWD, path, times, 0) == 0 else {
        throw PublishError("cannot set the modification time of \(path): \(String(cString: strerror(errno)))")
    }
}

/// rmdir(2): removes a folder only when it is empty (a candidate for AtomicFiles).
private func removeFolderIfEmpty(_ path: String) {
    _ = rmdir(path)
}
