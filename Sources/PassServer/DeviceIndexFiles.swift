import AtomicFiles
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
        let lock = locks[Int(UInt(bitPattern: relative.hashValue) % UInt(locks.count))]
        lock.lock()
        defer { lock.unlock() }
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
