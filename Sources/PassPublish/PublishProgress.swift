/// What `passforge publish` reports while it runs.
package enum PublishProgress: Sendable, Equatable {
    /// The plan: passes, bundles and files (links included) to send, files to delete.
    case planned(passes: Int, bundles: Int, files: Int, removals: Int)
    /// Files landed at the destination so far.
    case uploading(done: Int, total: Int)
    case sendingState
    case removing(files: Int)
}

/// The result of a publish, for the summary line.
package struct PublishSummary: Sendable, Equatable, CustomStringConvertible {
    /// Passes whose files were sent.
    package var passesSent = 0
    /// Files written at the destination: pass files and their links.
    package var filesSent = 0
    /// Bytes of the pass files sent.
    package var bytesSent = 0
    /// `.pkpasses` bundles sent (new or changed).
    package var bundlesSent = 0
    package var bundleBytesSent = 0
    /// Passes the destination listed and the new build does not.
    package var passesRemoved = 0
    /// Bundle files deleted at the destination: bundles the new build does not have.
    package var bundlesRemoved = 0
    /// Files deleted at the destination, bundles included (a missing one counts too), landing files not.
    package var filesRemoved = 0
    /// Landing page files (pages, logos, badges) sent, their bytes, and those deleted.
    package var landingFilesSent = 0
    package var landingBytesSent = 0
    package var landingFilesRemoved = 0
    /// Whether the build state was sent (it is not when the destination already has it).
    package var stateSent = false
    /// The update tag of the published build.
    package var lastUpdateTag: Int64 = 0
    /// A dry run: the counts are what would be sent and removed; nothing was.
    package var isDryRun = false
    /// In a dry run, the files that would be written (pass files, their links, bundles), in order.
    package var plannedUploads: [String] = []
    /// In a dry run, the files that would be deleted, in order.
    package var plannedRemovals: [String] = []

    package init() {}

    package var description: String {
        guard
            stateSent || filesSent > 0 || bundlesSent > 0 || filesRemoved > 0 || landingFilesSent > 0
                || landingFilesRemoved > 0
        else {
            return
                "\(isDryRun ? "dry run: " : "")nothing to publish: the destination already has this build (state \(lastUpdateTag))"
        }
        if isDryRun {
            return
                "dry run, nothing sent or removed: would send \(Self.count(passesSent, "pass", "passes")) (\(Self.count(filesSent, "file", "files")), \(bytesSent) bytes), \(Self.count(bundlesSent, "bundle", "bundles")) (\(bundleBytesSent) bytes)\(stateSent ? " and the build state" : ""); would remove \(Self.count(passesRemoved, "pass", "passes")) and \(Self.count(bundlesRemoved, "bundle", "bundles")) (\(Self.count(filesRemoved, "file", "files")))\(landing); state \(lastUpdateTag)"
        }
        let bundles =
            bundlesSent + bundlesRemoved == 0
            ? ""
            : ", bundles: \(bundlesSent) sent (\(bundleBytesSent) bytes), \(bundlesRemoved) removed"
        return
            "published \(passesSent) pass\(passesSent == 1 ? "" : "es") (\(filesSent) file\(filesSent == 1 ? "" : "s"), \(bytesSent) bytes), removed \(passesRemoved)\(bundles)\(landing), state \(lastUpdateTag)"
    }

    /// `, landing pages: 3 files sent (2048 bytes), 0 removed`, or nothing when no landing file moved.
    private var landing: String {
        guard landingFilesSent + landingFilesRemoved > 0 else { return "" }
        return ", landing pages: \(Self.count(landingFilesSent, "file", "files")) \(isDryRun ? "to send" : "sent")"
            + " (\(landingBytesSent) bytes), \(landingFilesRemoved) \(isDryRun ? "to remove" : "removed")"
    }

    private static func count(_ number: Int, _ one: String, _ many: String) -> String {
        "\(number) \(number == 1 ? one : many)"
    }
}
