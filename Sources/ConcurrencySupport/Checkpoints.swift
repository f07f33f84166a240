/// Named points of a long operation (a build's commit, a publish's upload) where a test may look at the
/// files: the operation calls `reached(_:)` on its own thread and goes on only when it returns, so what is on
/// disk then is exactly what a process killed at that point would leave. Production code passes
/// `NoCheckpoints`; a test injects one that copies the tree at the point it names, then runs a fresh
/// operation on the copy and checks that it completes (no environment variable, no stalled process).
package protocol Checkpoints: Sendable {
    /// The operation reached `point` ("staged", "journaled", "applying", "applied", ...), between steps: no
    /// other thread of it is writing files while this runs.
    func reached(_ point: String)
}

/// The checkpoints of real use: none.
package struct NoCheckpoints: Checkpoints {
    package init() {}
    package func reached(_ point: String) {}
}
