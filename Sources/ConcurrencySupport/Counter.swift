import Synchronization

/// A counter shared between threads: each `increment()` returns a number no
/// other call returned.
package final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    package init() {}

    /// Adds one and returns the new value (1 for the first call).
    package func increment() -> Int {
        value.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
