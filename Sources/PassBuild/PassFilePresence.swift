import AtomicFiles
import Foundation
import Synchronization

/// Which files are in the output folder, to check that every unchanged pass
/// still has its file: each folder is listed once (one getdents per few
/// hundred names) instead of one stat per pass.
final class PassFilePresence: Sendable {
    private let directory: String
    /// Folder (relative to the output folder) → the names in it; nil when it cannot be listed.
    private let folders = Mutex<[String: Set<String>?]>([:])

    init(directory: String) { self.directory = directory }

    /// Whether `path` (relative to the output folder) names an entry there.
    func contains(_ path: String) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return FileManager.default.fileExists(atPath: "\(directory)/\(path)") }
        let folder = String(path[..<slash]), name = path[path.index(after: slash)...]
        return folders.withLock { folders in
            if folders[folder] == nil {
                folders[folder] = AtomicFileSystem.directoryEntries("\(directory)/\(folder)").map { Set($0.map(\.name)) }
            }
            return folders[folder]!?.contains(String(name)) ?? false
        }
    }
}
