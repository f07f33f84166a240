import AtomicFiles
import ConcurrencySupport
import Foundation
import ObjectStorage
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// A project built by the real `passforge build`, and what the tests check
/// about a destination it was published to.
final class BuiltProject: @unchecked Sendable {
    let project: ProjectFixture
    let environment: [String: String]
    var output: String { project.output }

    init(passCount: Int) throws {
        project = ProjectFixture(passCount: passCount)
        environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        try build()
    }

    /// `content/cards.yml` with `count` passes; `points` sets each pass's data.
    func build(count: Int? = nil, points: @escaping (Int) -> Int = { $0 }) throws {
        if let count { project.writeList(count: count, points: points) }
        let result = try project.passforge(["build"], environment: environment)
        guard result.status == 0 else { throw HarnessFailure("passforge build failed: \(result.output)") }
    }

    func state() throws -> BuildState { try BuildState.load(from: output) }

    func record(_ serial: String) throws -> BuildState.ItemRecord {
        try #require(try state().passes["\(TestPKI.passType)/\(serial)"])
    }

    /// `content/family.yml`: `count` passes F-0 … with `bundle: NAME`, or
    /// without the line when `bundle` is nil. `points` changes F-0's data.
    func writeFamily(count: Int = 3, bundle: String? = "family", points: Int = 1) {
        var yaml = "template: card\n\(bundle.map { "bundle: \($0)\n" } ?? "")passes:\n"
        for i in 0..<count {
            yaml += "  - serialNumber: F-\(i)\n    data: { name: \"Member \(i)\", points: \(i == 0 ? points : i) }\n"
        }
        project.directory.write("content/family.yml", yaml)
    }

    /// The bundles the last build lists in bundles.json.
    func bundles() throws -> BundleComparison {
        try BundleComparison(localOutput: output, bytes: AtomicFileSystem.readFile("\(output)/\(BundleList.path)"))
    }

    func bundle(_ name: String = "family") throws -> BundleRecord {
        try #require(try bundles().bundles[name])
    }

    /// `passforge publish DEST` as a real process.
    func publishCommand(_ destination: String, environment extra: [String: String] = [:]) throws -> ProcessResult {
        try project.passforge(["publish", destination], environment: environment.merging(extra) { $1 })
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Looking at a destination folder directly (the ssh tests' host is this machine too).
struct DestinationTree {
    var root: String

    func state() throws -> BuildState { try BuildState.load(from: root) }

    func bytes(_ relative: String) -> [UInt8]? { AtomicFileSystem.readFile("\(root)/\(relative)") }

    func identity(_ relative: String) -> FileStamp? { FileStamp(path: "\(root)/\(relative)") }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: "\(root)/\(relative)") }

    /// Every regular file with its identity (inode, size, modification time).
    func identities() -> [String: FileStamp] {
        var result: [String: FileStamp] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if let identity = identity(relative), identity.isRegularFile, !relative.hasSuffix(".lock") {
                result[relative] = identity
            }
        }
        return result
    }

    /// What a server reading the destination relies on: every pass its state
    /// lists is there, whole, under every name of the pass, all of them one
    /// file. Whole means the bytes of the listed version, or of the version in
    /// `newer`, the build being published (files land before the state).
    func expectConsistent(newer: BuildState? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let state = try state()
        for record in state.passes.values {
            let files = PassFiles(record)
            let contents = try #require(
                self.bytes(files.passPath), "\(files.passPath) is missing", sourceLocation: sourceLocation)
            let etags = [record.etag, newer?.passes[record.key]?.etag].compactMap { $0 }
            #expect(etags.contains(BuildState.etag(of: contents)), "\(files.passPath)", sourceLocation: sourceLocation)
            let inode = identity(files.passPath)?.inode
            for link in files.linkPaths {
                #expect(
                    identity(link)?.inode == inode, "\(link) is not a link of \(files.passPath)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    /// Every file of the pass is at the destination with the local bytes and modification time.
    func expectSame(as output: String, record: BuildState.ItemRecord, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let local = FileStamp(path: "\(output)/\(record.path)")
        for path in PassFiles(record).allPaths {
            #expect(
                bytes(path) == AtomicFileSystem.readFile("\(output)/\(record.path)"), "\(path)",
                sourceLocation: sourceLocation)
            #expect(
                identity(path)?.modifiedSeconds == local?.modifiedSeconds, "\(path)", sourceLocation: sourceLocation)
            #expect(
                identity(path)?.modifiedNanoseconds == local?.modifiedNanoseconds, "\(path)",
                sourceLocation: sourceLocation)
        }
    }

    /// The `download/*.pkpasses` files at the destination.
    func bundleFiles() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/download")) ?? []
        return Set(names.filter { $0.hasSuffix(".pkpasses") }.map { "download/\($0)" })
    }

    /// The destination has the build's bundle list and exactly its bundles,
    /// each with the local bytes and modification time.
    func expectSameBundles(as built: BuiltProject, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            bytes(BundleList.path) == AtomicFileSystem.readFile("\(built.output)/\(BundleList.path)"),
            sourceLocation: sourceLocation)
        let bundles = try built.bundles().bundles.values
        #expect(bundleFiles() == Set(bundles.map(\.downloadPath)), sourceLocation: sourceLocation)
        for bundle in bundles {
            let local = FileStamp(path: "\(built.output)/\(bundle.downloadPath)")
            #expect(
                bytes(bundle.downloadPath) == AtomicFileSystem.readFile("\(built.output)/\(bundle.downloadPath)"),
                "\(bundle.downloadPath)", sourceLocation: sourceLocation)
            #expect(
                identity(bundle.downloadPath)?.modifiedSeconds == local?.modifiedSeconds, sourceLocation: sourceLocation
            )
            #expect(
                identity(bundle.downloadPath)?.modifiedNanoseconds == local?.modifiedNanoseconds,
                sourceLocation: sourceLocation)
        }
    }

    /// A device index file, as the server at the destination writes it.
    func writeDeviceIndex(_ device: String = "1a2b3c4d5e6f") throws -> String {
        let relative = "v1/devices/\(device)/registrations/\(TestPKI.passType)"
        try AtomicFileSystem.write(
            Array(#"{"serialNumbers":["C-0000"],"lastUpdated":"1"}"#.utf8), to: "\(root)/\(relative)")
        return relative
    }
}

/// A transport that lands the first `passes` passes and then fails, as a
/// publish killed half-way through its uploads.
struct FailingTransport: PublishTransport {
    var inner: any PublishTransport
    var passes: Int

    func fetchState() throws -> DestinationState { try inner.fetchState() }
    func createDestination() throws { try inner.createDestination() }
    func lockDestination() throws -> (any DestinationLock)? { try inner.lockDestination() }
    func noteRemovals(_ paths: [String]) throws { try inner.noteRemovals(paths) }
    func close() { inner.close() }
    func upload(_ uploads: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws {
        try inner.upload(Array(uploads.prefix(passes)), from: localRoot, progress: progress)
        throw HarnessFailure("connection lost after \(passes) passes")
    }
    func uploadState(_ names: [String], from localRoot: String) throws { try inner.uploadState(names, from: localRoot) }
    func remove(_ paths: [String], emptyFolders folders: [String]) throws {
        try inner.remove(paths, emptyFolders: folders)
    }
}

/// A publish that stops at `point` as if killed there: run in this process with a checkpoint (`Checkpoints`,
/// the publish's own seam) that copies the destination when the publish reaches `point`. `whileStalled` runs
/// there, while the publish holds its locks (a second publish, say). The publish then goes on to its end,
/// and the copy is put back in its place: the destination is left exactly as a publish killed at `point`
/// leaves it. For a bucket, the copy is of every object a publish of either build may write; its lock
/// object is left naming a process that has exited, as a killed publish's is.
func killPublish(
    _ built: BuiltProject, to destination: String, at point: String, environment extra: [String: String] = [:],
    bucket: BucketTree? = nil, whileStalled: @escaping () throws -> Void = {}
) throws {
    let target = try PublishDestination(parsing: destination)
    let snapshot = DestinationSnapshot(target, bucket: bucket, built: built)
    let checkpoint = StopAt(point) {
        try snapshot.take()
        try whileStalled()
    }
    let environment = ProcessInfo.processInfo.environment.merging(built.environment) { $1 }.merging(extra) { $1 }
    _ = try Publisher(
        outputDirectory: built.output, destination: target, environment: environment,
        checkpoints: checkpoint
    ).publish()
    try checkpoint.result()
    try snapshot.restore()
}

/// Runs `action` when the publish reaches `point`, and keeps its error for the test.
final class StopAt: Checkpoints, @unchecked Sendable {
    let point: String
    private let action: () throws -> Void
    private let lock = NSLock()
    private var outcome: Result<Void, any Error>?

    init(_ point: String, action: @escaping () throws -> Void) {
        (self.point, self.action) = (point, action)
    }

    func reached(_ point: String) {
        guard point == self.point else { return }
        let outcome = Result { try action() }
        lock.withLock { self.outcome = outcome }
    }

    func result() throws {
        guard let outcome = lock.withLock({ self.outcome }) else {
            throw HarnessFailure("the publish did not reach \(point)")
        }
        try outcome.get()
    }
}

/// What is at a destination at one moment, and putting it back.
final class DestinationSnapshot: @unchecked Sendable {
    let destination: PublishDestination
    let bucket: BucketTree?
    let built: BuiltProject
    private let copy = TemporaryDirectory("passforge-snapshot")
    private var objects: [String: [UInt8]?] = [:]

    init(_ destination: PublishDestination, bucket: BucketTree?, built: BuiltProject) {
        (self.destination, self.bucket, self.built) = (destination, bucket, built)
    }

    /// A folder (here or over ssh to this machine), by `cp -a` (links, times and modes kept); a bucket, by object.
    func take() throws {
        if let bucket {
            for path in try objectPaths(bucket) { objects[path] = try bucket.object(path)?.body }
            return
        }
        try copyFolder(folder, to: copy.file("tree"))
    }

    func restore() throws {
        if let bucket {
            for (path, bytes) in objects {
                if var bytes {
                    if path == ObjectStorageLock.path { bytes = try Self.heldByAnExitedProcess(bytes) }
                    try bucket.put(path, bytes)
                } else {
                    try bucket.delete(path)
                }
            }
            return
        }
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.moveItem(atPath: copy.file("tree"), toPath: folder)
    }

    private var folder: String {
        switch destination {
        case .directory(let path), .remote(_, let path): path
        case .objectStorage: ""
        }
    }

    /// Every object a publish of the bucket's build or of the local one writes or deletes.
    private func objectPaths(_ bucket: BucketTree) throws -> Set<String> {
        var paths: Set<String> = [
            TreeLayout.statePath, TreeLayout.downloadsListPath, TreeLayout.bundleListPath,
            ObjectStorageTransport.removalsNotePath, ObjectStorageLock.path,
        ]
        let states = [
            try bucket.object(TreeLayout.statePath)?.body, AtomicFileSystem.readFile(BuildState.path(in: built.output)),
        ]
        for bytes in states.compactMap({ $0 }) {
            let state = try BuildState.decode(bytes, of: built.output)
            for record in state.passes.values { paths.formUnion(PassFiles(record).allPaths) }
            for removed in state.removedPasses.values { paths.formUnion(PassFiles.paths(of: removed)) }
        }
        return paths
    }

    /// The lock object as a publish killed with SIGKILL leaves it: its process is gone.
    private static func heldByAnExitedProcess(_ bytes: [UInt8]) throws -> [UInt8] {
        var holder = try JSONDecoder().decode(ObjectStorageLock.Holder.self, from: Data(bytes))
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        holder.pid = exited.processIdentifier
        return holder.bytes
    }

    private func copyFolder(_ source: String, to target: String) throws {
        let cp = try runProcess("/bin/cp", ["-a", source, target])
        guard cp.status == 0 else { throw HarnessFailure("cp -a \(source) \(target) failed: \(cp.stderr)") }
    }
}
