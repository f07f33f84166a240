import AtomicFiles
import Foundation
import PassModel
import Synchronization
import WalletTree

/// Which files are in the output folder, to check that every unchanged pass
/// still has its file: each folder is listed once (one getdents per few
/// hundred names) instead of one stat per pass.
final class PassFilePresence: Sendable {
    private let directory: String
    /// Type → the names in `v1/passes/<type>` (`v1/orders/<type>`), listed in the background
    /// from when the presence is made, and read without a lock: every
    /// unchanged pass is checked here. Written once, before `listed` is left;
    /// read only after waiting on it.
    nonisolated(unsafe) private var itemFolders: [String: Set<String>] = [:]
    private let listed = DispatchGroup()
    /// Folder (relative to the output folder) → the names in it; nil when it cannot be listed.
    private let folders = Mutex<[String: Set<String>?]>([:])

    /// - Parameter types: the type identifiers whose folders are listed at once, with their kind.
    init(directory: String, types: [String: WalletItemKind] = [:]) {
        self.directory = directory
        guard !types.isEmpty else { return }
        // Listing 100,000 names takes a while: done while the build reads its content.
        listed.enter()
        DispatchQueue.global().async { [self] in
            var itemFolders: [String: Set<String>] = [:]
            for (type, kind) in types {
                guard
                    let entries = AtomicFileSystem.directoryEntries(
                        TreeLayout.path("\(TreeLayout.itemFolder(kind))/\(type)", in: directory))
                else { continue }
                var names = Set<String>(minimumCapacity: entries.count)
                for entry in entries { names.insert(entry.name) }
                itemFolders[type] = names
            }
            self.itemFolders = itemFolders
            listed.leave()
        }
    }

    /// Whether the file of a pass or order (`record.path`) is there.
    func contains(_ record: BuildState.ItemRecord) -> Bool {
        contains(kind: record.kind, type: record.typeIdentifier, identifier: record.identifier)
    }

    /// Whether `v1/passes/<type>/<identifier>` (`v1/orders/…` for an order) is there.
    func contains(kind: WalletItemKind, type: String, identifier: String) -> Bool {
        listed.wait()
        if let names = itemFolders[type], !identifier.utf8.contains(UInt8(ascii: "/")) {
            return names.contains(identifier)
        }
        return contains(TreeLayout.itemPath(kind: kind, type: type, identifier: identifier))
    }

    /// Whether `path` (relative to the output folder) names an entry there.
    func contains(_ path: String) -> Bool {
        guard let slash = path.lastIndex(of: "/") else {
            return AtomicFileSystem.exists(TreeLayout.path(path, in: directory))
        }
        let folder = String(path[..<slash])
        let name = path[path.index(after: slash)...]
        return folders.withLock { folders in
            if folders.index(forKey: folder) == nil {
                let names: Set<String>? = AtomicFileSystem.directoryEntries(TreeLayout.path(folder, in: directory)).map
                { Set($0.map(\.name)) }
                folders[folder] = .some(names)
            }
            return folders[folder]??.contains(String(name)) ?? false
        }
    }
}
