import AtomicFiles

/// How a publish reaches its destination: a local folder, or rsync over ssh.
///
/// Every method is safe to run again after a kill: a file lands whole or not
/// at all, and deleting a missing file is not an error.
package protocol PublishTransport: Sendable {
    /// The destination's build state and downloads list, as bytes.
    func fetchState() throws -> DestinationState

    /// Creates the destination folder when it does not exist yet.
    func createDestination() throws

    /// Keeps another publish to the same destination out until released;
    /// nil when the transport cannot lock (a remote host).
    func lockDestination() throws -> FileLock?

    /// Phase 1: each pass file, then its links. Every file lands atomically
    /// with the local file's modification time; a new link is a hard link to
    /// the landed pass file, and an existing link is replaced in one rename, so
    /// a reader always finds a whole pass under every name. Everything is on
    /// disk when this returns. `progress` gets the number of files landed so far.
    func upload(_ passes: [PassUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws

    /// Phase 2: `.passforge/downloads.csv`, then `.passforge/state.json`, each atomically.
    func uploadState(from localRoot: String) throws

    /// Phase 3: deletes the files (missing ones are fine), then the pass-type
    /// folders among `folders` that are left empty.
    func remove(_ paths: [String], emptyFolders folders: [String]) throws
}

/// What a destination holds of a build.
package enum DestinationState: Sendable, Equatable {
    /// The destination folder does not exist.
    case missingFolder
    /// The folder exists but no build was published there.
    case noState
    case published(state: [UInt8], downloadsCSV: [UInt8]?)
}

/// One pass to carry to the destination: its file and the names linked to it.
package struct PassUpload: Sendable, Equatable {
    /// `v1/passes/<type>/<serial>`.
    package var passPath: String
    /// Link names the destination does not have for this pass yet.
    package var newLinks: [String]
    /// Link names the destination has for the previous version: replaced in place.
    package var replacedLinks: [String]
    /// Bytes of the pass file.
    package var size: Int

    package var fileCount: Int { 1 + newLinks.count + replacedLinks.count }
    package var links: [String] { newLinks + replacedLinks }
}
