import PassModel
import WalletTree
import AtomicFiles
import Foundation
import Synchronization

/// Which files are in the output folder, to check that every unchanged pass
/// still has its file: each folder is listed once (one getdents per few
/// hundred names) instead of one stat per pass.
final class PassFilePresence: Sendable {
    private let directory: String
    /// Pass type → the names in `v1/passes/<type>`, listed in the background
    /// from when the presence is made, and read without a lock: every
    /// unchanged pass is checked here. Written once, before `listed` is left;
    /// read only after waiting on it.
    nonisolated(unsafe) private var passFolders: [String: Set<String>] = [:]
    private let listed = DispatchGroup()
    /// Folder (relative to the output folder) → the names in it; nil when it cannot be listed.
    private let folders = Mutex<[String: Set<String>?]>([:])

    /// - Parameter passTypes: the types whose pass folders are listed at once.
    init(directory: String, passTypes: [String] = []) {
        self.directory = directory
        guard !passTypes.isEmpty else { return }
        // Listing 100,000 names takes a while: done while the build reads its content.
        listed.enter()
        DispatchQueue.global().async { [self] in
            var passFolders: [String: Set<String>] = [:]
            for type in passTypes {
                guard let entries = AtomicFileSystem.directoryEntries("\(directory)/\(TreeLayout.itemFolder(.pass))/\(type)") else { continue }
                var names = Set<String>(minimumCapacity: entries.count)
                for entry in entries { names.insert(entry.name) }
                passFolders[type] = names
            }
            self.passFolders = passFolders
            listed.leave()
        }
    }

    /// Whether the file of a pass (`v1/passes/<type>/<serial>`) is there.
    func containsPass(passTypeIdentifier type: String, serialNumber serial: String) -> Bool {
        listed.wait()
        if let names = passFolders[type], !serial.utf8.contains(UInt8(ascii: "/")) { return names.contains(serial) }
        return contains(TreeLayout.passPath(type: type, serial: serial))
    }

    /// Whether `path` (relative to the output folder) names an entry there.
    func contains(_ path: String) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return AtomicFileSystem.exists("\(directory)/\(path)") }
        let folder = String(path[..<slash]), name = path[path.index(after: slash)...]
        return folders.withLock { folders in
            if folders.index(forKey: folder) == nil {
                let names: Set<String>? = AtomicFileSystem.directoryEntries("\(directory)/\(folder)").map { Set($0.map(\.name)) }
                folders[folder] = .some(names)
            }
            return folders[folder]??.contains(String(name)) ?? false
        }
    }
}
