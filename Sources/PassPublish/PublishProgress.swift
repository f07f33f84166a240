/// What `passforge publish` reports while it runs.
package enum PublishProgress: Sendable, Equatable {
    /// The plan: passes and files to send, files to delete.
    case planned(passes: Int, files: Int, removals: Int)
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
    /// Passes the destination listed and the new build does not.
    package var passesRemoved = 0
    /// Files deleted at the destination (a missing one counts too).
    package var filesRemoved = 0
    /// Whether the build state was sent (it is not when the destination already has it).
    package var stateSent = false
    /// The update tag of the published build.
    package var lastUpdateTag: Int64 = 0

    package init() {}

    package var description: String {
        guard stateSent || filesSent > 0 || filesRemoved > 0 else {
            return "nothing to publish: the destination already has this build (state \(lastUpdateTag))"
        }
        return "published \(passesSent) pass\(passesSent == 1 ? "" : "es") (\(filesSent) file\(filesSent == 1 ? "" : "s"), \(bytesSent) bytes), removed \(passesRemoved), state \(lastUpdateTag)"
    }
}
