import AtomicFiles
import ConcurrencySupport
import Foundation

extension DeviceIndexFiles {
    /// Moves the indices of the layout before the per-type folders,
    /// `v1/devices/<device>/registrations/<type>`, to `v1/devices/<type>/<device>`
    /// (`TreeLayout.deviceIndexPath`), while no process writes an index (every
    /// shard lock held). Returns the number of indices moved.
    ///
    /// `passforge serve` runs it at start and a build before it refreshes
    /// indices; once a tree is migrated it costs one listing of `v1/devices/`,
    /// which then holds one folder per type.
    @discardableResult
    package func migrateLegacyLayout() async throws -> Int {
        let locks = try await lockAllShardsAcrossProcesses()
        defer { for lock in locks { lock.release() } }
        return try await pool.run { [self] in try migrateLegacyLayoutLocked() }
    }

    /// `migrateLegacyLayout` for a caller holding every shard lock. Safe to
    /// kill and to run again: each index moves in one rename; an index already
    /// at its new path (written since) wins and the old one is removed; a
    /// device's emptied folders are removed only once the new names are on disk.
    /// An entry of `v1/devices/` is a device of the old layout when it holds a
    /// `registrations` folder; a type's folder holds only files.
    func migrateLegacyLayoutLocked() throws -> Int {
        let devices = TreeLayout.path(TreeLayout.devicesFolder, in: outputDirectory)
        guard let entries = AtomicFileSystem.directoryEntries(devices) else { return 0 }
        var moved = 0
        var folders = Set<String>()
        var emptied: [String] = []
        for entry in entries where entry.isDirectory {
            let registrations = "\(devices)/\(entry.name)/\(TreeLayout.legacyRegistrationsFolderName)"
            guard AtomicFileSystem.isDirectory(registrations),
                let files = AtomicFileSystem.directoryEntries(registrations)
            else {
                continue
            }
            for file in files where !file.isDirectory {
                let old = "\(registrations)/\(file.name)"
                // A temporary file of a write that was stopped half-way is no index.
                guard TreeLayout.isPassType(file.name), !Self.isTemporaryName(file.name) else {
                    try AtomicFileSystem.remove(old)
                    continue
                }
                let new = TreeLayout.path(
                    TreeLayout.deviceIndexPath(device: entry.name, type: file.name), in: outputDirectory)
                let folder = String(TreeLayout.parentFolder(of: new))
                if folders.insert(folder).inserted { try createFolder(folder) }
                if AtomicFileSystem.exists(new) {
                    try AtomicFileSystem.remove(old)
                } else {
                    try AtomicFileSystem.rename(old, to: new)
                    moved += 1
                }
            }
            emptied.append("\(devices)/\(entry.name)")
        }
        for folder in folders.sorted() { try AtomicFileSystem.syncDirectory(folder) }
        for device in emptied {
            AtomicFileSystem.removeEmptyDirectory("\(device)/\(TreeLayout.legacyRegistrationsFolderName)")
            AtomicFileSystem.removeEmptyDirectory(device)
        }
        if !emptied.isEmpty { try AtomicFileSystem.syncDirectory(devices) }
        return moved
    }

    /// `<name>.tmp-<pid>-<n>`: `AtomicFileSystem.temporaryPath`'s names.
    static func isTemporaryName(_ name: String) -> Bool {
        guard let range = name.range(of: ".tmp-", options: .backwards) else { return false }
        let rest = name[range.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        return rest.count == 2
            && rest.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}
