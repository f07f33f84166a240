/// The result of a change, read inside the transaction that made it.
package struct RegistrationChange: Sendable, Equatable {
    package var outcome: RegistrationOutcome
    /// The device's index for the pass type after the change.
    package var index: DeviceIndex
    /// Increases with every committed change, in commit order for changes of
    /// the same index, so that index files written concurrently end up in the
    /// order of the changes (a writer skips a revision older than one it wrote).
    package var revision: Int64

    package init(outcome: RegistrationOutcome, index: DeviceIndex, revision: Int64) {
        self.outcome = outcome
        self.index = index
        self.revision = revision
    }
}
