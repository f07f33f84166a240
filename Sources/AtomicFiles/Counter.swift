import Synchronization

/// A counter shared between threads: each `increment()` returns a number no
/// other call returned.
public final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    /// Adds one and returns the new value (1 for the first call).
    public func increment() -> Int {
        value.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
