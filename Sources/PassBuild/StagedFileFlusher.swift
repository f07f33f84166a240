import AtomicFiles
import Dispatch
import Foundation
import WalletTree

/// Writes staged files to disk while the build is still signing, so that
/// the commit's `syncfs` waits only for the last few of them.
///
/// Staged files are written to the page cache; nothing sends them to disk
/// until the commit makes them durable (the kernel's own writeback starts
/// only after 30 s, or at 10% of memory). One `syncfs` at the end then
/// waits for every byte of the build at once, with both cores idle: 0.2 s
/// for 10,000 passes and 1.5 s for 100,000 here. A thread that syncs every
/// half second overlaps that wait with the signing; the commit still
/// syncs everything itself, so durability does not depend on this thread.
final class StagedFileFlusher: Sendable {
    private let stopped = DispatchSemaphore(value: 0)

    /// Starts syncing the file system of `stagingDirectory` every `interval`,
    /// once that folder exists (a build that stages nothing never syncs).
    init(stagingDirectory: String, interval: DispatchTimeInterval = .milliseconds(500)) {
        let stopped = self.stopped
        let thread = Thread {
            while stopped.wait(timeout: .now() + interval) == .timedOut {
                guard AtomicFileSystem.exists(stagingDirectory) else { continue }
                // A failure here is not the build's: the commit's own sync reports it.
                try? AtomicFileSystem.syncFileSystem(containing: stagingDirectory)
            }
        }
        thread.name = "passforge staged-file flusher"
        thread.start()
    }

    /// Stops the syncing. Does not wait for a sync under way: the commit syncs
    /// again anyway, and a build that stops here to fail should not wait for the disk.
    func stop() { stopped.signal() }
}
