import AtomicFiles
import Foundation
import PassBuild

/// The local output tree, as publish and `--state-from` use it: under the
/// build's own lock, so no build changes it meanwhile.
struct LocalOutput: Sendable {
    var directory: String

    var stateDirectory: String { "\(directory)/.passforge" }

    /// Takes the build lock (the one `passforge build` holds) and finishes a
    /// build that was interrupted, so that the tree matches its state.
    func lock(purpose: String) throws -> FileLock {
        let path = "\(stateDirectory)/build.lock"
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(path, blocking: false)
        } catch {
            throw PublishError(error.description)
        }
        guard let lock else {
            throw PublishError("a passforge build is running on \(directory) (\(path) is locked); \(purpose) when it has finished")
        }
        do {
            _ = try OutputTree(directory: directory).rollForward()
        } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// Reads a state that came from a destination, with the build's own
    /// decoder and its version check.
    func decodeState(_ bytes: [UInt8], from destination: PublishDestination) throws -> BuildState {
        let folder = "\(stateDirectory)/published-state"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try AtomicFileSystem.writeFile(bytes, to: try Self.prepare(BuildState.path(in: folder)), sync: false)
        do {
            return try BuildState.load(from: folder)
        } catch {
            throw PublishError("the build state at \(destination) cannot be read: \(error)")
        }
    }

    /// Creates the folder of `path` and returns `path`.
    private static func prepare(_ path: String) throws -> String {
        try AtomicFileSystem.createDirectory((path as NSString).deletingLastPathComponent)
        return path
    }
}
