/// What `passforge publish` reports while it runs.
public enum PublishProgress: Sendable, Equatable {
    /// The plan: passes and files to send, files to delete.
    case planned(passes: Int, files: Int, removals: Int)
    /// Files landed at the destination so far.
    case uploading(done: Int, total: Int)
    case sendingState
    case removing(files: Int)
}

/// The result of a publish, for the summary line.
public struct PublishSummary: Sendable, Equatable, CustomStringConvertible {
    /// Passes whose files were sent.
    public var passesSent = 0
    /// Files written at the destination: pass files and their links.
    public var filesSent = 0
    /// Bytes of the pass files sent.
    public var bytesSent = 0
    /// Passes the destination listed and the new build does not.
    public var passesRemoved = 0
    /// Files deleted at the destination (a missing one counts too).
    public var filesRemoved = 0
    /// Whether the build state was sent (it is not when the destination already has it).
    public var stateSent = false
    /// The update tag of the published build.
    public var lastUpdateTag: Int64 = 0

    public init() {}

    public var description: String {
        guard stateSent || filesSent > 0 || filesRemoved > 0 else {
            return "nothing to publish: the destination already has this build (state \(lastUpdateTag))"
        }
        return "published \(passesSent) pass\(passesSent == 1 ? "" : "es") (\(filesSent) file\(filesSent == 1 ? "" : "s"), \(bytesSent) bytes), removed \(passesRemoved), state \(lastUpdateTag)"
    }
}
