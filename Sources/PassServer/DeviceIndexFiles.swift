import Foundation
import PassBuild
import RegistrationStore

/// The per-device index files of the output tree,
/// `v1/devices/<device>/registrations/<passTypeIdentifier>`: Apple's
/// SerialNumbers object, so that a static host answers "Get the List of
/// Updatable Passes" too (DESIGN.md "Output tree", "Static host and live server").
///
/// A static host cannot filter by `passesUpdatedSince`, so the file lists
/// every built pass the device holds, with `lastUpdated` the greatest of
/// their update tags; the device then makes conditional GETs.
public final class DeviceIndexFiles: @unchecked Sendable {
    public let outputDirectory: String
    private let locks = (0..<64).map { _ in NSLock() }
    private var written: [String: Int64] = [:]
    private let writtenLock = NSLock()

    public init(outputDirectory: String) {
        self.outputDirectory = outputDirectory
    }

    public static func relativePath(device: String, passTypeIdentifier: String) -> String {
        "v1/devices/\(device)/registrations/\(passTypeIdentifier)"
    }

    /// The file's bytes, or nil when none of `serialNumbers` is a built pass
    /// (then there is no file: nothing to list).
    public static func render(serialNumbers: [String], passTypeIdentifier: String, snapshot: PublishedTree.Snapshot) -> [UInt8]? {
        var listed: [String] = []
        var lastUpdated = Int64.min
        for serial in serialNumbers.sorted() {
            guard let tag = snapshot.updateTag(type: passTypeIdentifier, serial: serial) else { continue }
            listed.append(serial)
            lastUpdated = max(lastUpdated, tag)
        }
        guard !listed.isEmpty else { return nil }
        return SerialNumbersBody(serialNumbers: listed, lastUpdated: lastUpdated).encoded()
    }

    /// Writes (or removes) the index a change left, atomically (temporary
    /// file, fsync, rename). Changes of one index may finish in any order;
    /// one older than the last written is skipped. Blocks on fsync: call it
    /// off the cooperative thread pool (`BlockingIO.run`).
    public func apply(_ change: RegistrationChange, snapshot: PublishedTree.Snapshot) throws {
        try write(change.index, revision: change.revision, snapshot: snapshot)
    }

    /// Writes the current index of a device (from `RegistrationStore.index`), whatever was written before.
    public func write(_ index: DeviceIndex, snapshot: PublishedTree.Snapshot) throws {
        try write(index, revision: nil, snapshot: snapshot)
    }

    private func write(_ index: DeviceIndex, revision: Int64?, snapshot: PublishedTree.Snapshot) throws {
        let relative = Self.relativePath(device: index.device, passTypeIdentifier: index.passTypeIdentifier)
        let indexLock = lock(for: relative)
        indexLock.lock()
        defer { indexLock.unlock() }
        if let revision {
            let stale = writtenLock.withLock { () -> Bool in
                if let last = written[relative], last >= revision { return true }
                // Bounded memory: the map matters only while writes of one index overlap.
                if written.count > 100_000 { written.removeAll(keepingCapacity: true) }
                written[relative] = revision
                return false
            }
            if stale { return }
        }
        let path = "\(outputDirectory)/\(relative)"
        if let bytes = Self.render(serialNumbers: index.serialNumbers, passTypeIdentifier: index.passTypeIdentifier, snapshot: snapshot) {
            try AtomicFileSystem.write(bytes, to: path)
        } else {
            try AtomicFileSystem.remove(path)
            removeEmptyFolders(device: index.device)
        }
    }

    /// Rewrites the index of every device holding one of `passes` (keys
    /// `type/serial`), from the store's current registrations and `snapshot`:
    /// what a build does after it changed or removed those passes, so that
    /// `lastUpdated` and the lists of a static host follow the new build.
    /// Returns the number of indices written or removed.
    @discardableResult
    public func refresh(passes: some Sequence<String>, store: any RegistrationStore, snapshot: PublishedTree.Snapshot) async throws -> Int {
        var serialsByType: [String: [String]] = [:]
        for key in passes {
            guard let slash = key.firstIndex(of: "/") else { continue }
            serialsByType[String(key[..<slash]), default: []].append(String(key[key.index(after: slash)...]))
        }
        var count = 0
        for (type, serials) in serialsByType.sorted(by: { $0.key < $1.key }) {
            let indices = try await store.indices(holding: type, serialNumbers: serials)
            try await BlockingIO.run { [self] in try writeAll(indices, snapshot: snapshot) }
            count += indices.count
        }
        return count
    }

    /// Many indices at once, as durable as one by one but with two syncs of
    /// the file system instead of two fsyncs per file: every new file is
    /// written and flushed before any of them is renamed into place.
    public func writeAll(_ indices: [DeviceIndex], snapshot: PublishedTree.Snapshot) throws {
        var staged: [(temporary: String, relative: String)] = []
        var removed: [DeviceIndex] = []
        defer { for (temporary, _) in staged { unlink(temporary) } }
        for index in indices {
            let relative = Self.relativePath(device: index.device, passTypeIdentifier: index.passTypeIdentifier)
            let path = "\(outputDirectory)/\(relative)"
            guard let bytes = Self.render(serialNumbers: index.serialNumbers, passTypeIdentifier: index.passTypeIdentifier, snapshot: snapshot) else {
                removed.append(index)
                continue
            }
            try AtomicFileSystem.createDirectory((path as NSString).deletingLastPathComponent)
            let temporary = AtomicFileSystem.temporaryPath(for: path)
            try AtomicFileSystem.writeFile(bytes, to: temporary, sync: false)
            staged.append((temporary, relative))
        }
        guard !staged.isEmpty || !removed.isEmpty else { return }
        try AtomicFileSystem.syncFileSystem(containing: outputDirectory)
        while let (temporary, relative) = staged.popLast() {
            try lock(for: relative).withLock { try AtomicFileSystem.rename(temporary, to: "\(outputDirectory)/\(relative)") }
        }
        for index in removed {
            let relative = Self.relativePath(device: index.device, passTypeIdentifier: index.passTypeIdentifier)
            try lock(for: relative).withLock {
                try AtomicFileSystem.remove("\(outputDirectory)/\(relative)")
                removeEmptyFolders(device: index.device)
            }
        }
        try AtomicFileSystem.syncFileSystem(containing: outputDirectory)
    }

    /// Writes of one index never overlap: each index has one of 64 locks.
    private func lock(for relative: String) -> NSLock {
        locks[Int(UInt(bitPattern: relative.hashValue) % UInt(locks.count))]
    }

    /// `v1/devices/<device>/registrations/` and `v1/devices/<device>/` go with their last file.
    private func removeEmptyFolders(device: String) {
        let deviceFolder = "\(outputDirectory)/v1/devices/\(device)"
        rmdir("\(deviceFolder)/registrations")
        rmdir(deviceFolder)
    }
}

/// Apple's SerialNumbers object: `{"serialNumbers":[…],"lastUpdated":"…"}`.
struct SerialNumbersBody {
    var serialNumbers: [String]
    var lastUpdated: Int64

    /// Serial numbers match `[A-Za-z0-9][A-Za-z0-9._~-]*`: nothing to escape.
    func encoded() -> [UInt8] {
        var text = #"{"serialNumbers":["#
        for (index, serial) in serialNumbers.enumerated() {
            if index > 0 { text += "," }
            text += "\"" + JSONText.escape(serial) + "\""
        }
        text += #"],"lastUpdated":""# + String(lastUpdated) + "\"}"
        return Array(text.utf8)
    }
}
