/// The result of a change, read inside the transaction that made it.
public struct RegistrationChange: Sendable, Equatable {
    public var outcome: RegistrationOutcome
    /// The device's index for the pass type after the change.
    public var index: DeviceIndex
    /// Increases with every committed change, in commit order for changes of
    /// the same index, so that index files written concurrently end up in the
    /// order of the changes (a writer skips a revision older than one it wrote).
    public var revision: Int64

    public init(outcome: RegistrationOutcome, index: DeviceIndex, revision: Int64) {
        self.outcome = outcome
        self.index = index
        self.revision = revision
    }
}
