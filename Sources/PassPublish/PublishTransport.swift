package import AtomicFiles

/// How a publish reaches its destination: a local folder, or rsync over ssh.
///
/// Every method is safe to run again after a kill: a file lands whole or not
/// at all, and deleting a missing file is not an error.
package protocol PublishTransport: Sendable {
    /// The destination's build state, downloads list and bundle list, as bytes.
    func fetchState() throws -> DestinationState

    /// Creates the destination folder when it does not exist yet.
    func createDestination() throws

    /// Keeps another publish to the same destination out until released;
    /// nil when the transport cannot lock (a remote host).
    func lockDestination() throws -> (any DestinationLock)?

    /// Phase 1: each file (a pass file or a bundle), then its links. Every
    /// file lands atomically with the local file's modification time; a new
    /// link is a hard link to the landed file, and an existing link is
    /// replaced in one rename, so a reader always finds a whole pass under
    /// every name. Everything is on disk when this returns. `progress` gets
    /// the number of files landed so far.
    func upload(_ files: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws

    /// Phase 2: the files under `.passforge/` named in `names` (relative to
    /// the root), in that order, each atomically: the bundle list, the
    /// downloads list, the landing page list, then `state.json`.
    func uploadState(_ names: [String], from localRoot: String) throws

    /// Before phase 2, when a publish will delete files: a transport that
    /// cannot list what it holds (object storage) notes them, so that a
    /// publish killed between the state and the deletions still finds them.
    func noteRemovals(_ paths: [String]) throws

    /// Phase 3: deletes the files, in order (missing ones are fine), then the
    /// pass-type folders among `folders` that are left empty.
    func remove(_ paths: [String], emptyFolders folders: [String]) throws

    /// Frees what the transport holds (connections), once, at the end.
    func close()
}

extension PublishTransport {
    package func noteRemovals(_ paths: [String]) throws {}
    package func close() {}
}

/// What keeps a second publish out: a file lock, or a lock object in a bucket.
package protocol DestinationLock: Sendable {
    func release()
}

extension FileLock: DestinationLock {}

/// What a destination holds of a build.
package enum DestinationState: Sendable, Equatable {
    /// The destination folder does not exist.
    case missingFolder
    /// The folder exists but no build was published there.
    case noState
    case published(PublishedBuild)
}

/// The bookkeeping files of the build at a destination.
package struct PublishedBuild: Sendable, Equatable {
    /// `.passforge/state.json`.
    package var state: [UInt8]
    /// `.passforge/downloads.csv`, nil when there is none.
    package var downloadsCSV: [UInt8]?
    /// `.passforge/bundles.json`, nil when there is none (no bundles, or published before publish carried them).
    package var bundlesJSON: [UInt8]?
    /// The `download/*.pkpasses` files present, relative to the root; listed
    /// only when there is a bundles.json. A publish killed after sending the
    /// bundle list and before deleting old bundles leaves files no list
    /// names: they are found here.
    package var bundleFiles: [String]
    /// `.passforge/landing-pages.txt`, nil when there is none (pages switched off, or published before publish
    /// carried them).
    package var landingPages: [UInt8]?
    /// The landing files (`download/*.html|.png|.svg`) present that the destination's landing-pages.txt does not
    /// name, or that a publish noted it would delete: left by a publish killed between its lists and its removals.
    package var landingFiles: [String]
    /// The files a publish noted it would delete before it sent its state (`noteRemovals`): a publish killed
    /// between its state and its removals leaves names the new state no longer tells of (a removed pass
    /// without a token, a token name or download a changed pass dropped). The next publish deletes them.
    package var notedRemovals: [String] = []

    package init(
        state: [UInt8], downloadsCSV: [UInt8]?, bundlesJSON: [UInt8]? = nil, bundleFiles: [String] = [],
        landingPages: [UInt8]? = nil, landingFiles: [String] = []
    ) {
        (self.state, self.downloadsCSV, self.bundlesJSON, self.bundleFiles) = (
            state, downloadsCSV, bundlesJSON, bundleFiles
        )
        (self.landingPages, self.landingFiles) = (landingPages, landingFiles)
    }
}

/// One file to carry to the destination (a pass file or a bundle) and the names linked to it.
package struct FileUpload: Sendable, Equatable {
    /// `v1/passes/<type>/<serial>` or `download/<capability>.pkpasses`.
    package var path: String
    /// Link names the destination does not have for this file yet.
    package var newLinks: [String] = []
    /// Link names the destination has for the previous version: replaced in place.
    package var replacedLinks: [String] = []
    /// Bytes of the file.
    package var size: Int
    /// The ETag the local file must have (the build state's or bundle list's).
    package var etag: String

    package var fileCount: Int { 1 + newLinks.count + replacedLinks.count }
    package var links: [String] { newLinks + replacedLinks }
}
