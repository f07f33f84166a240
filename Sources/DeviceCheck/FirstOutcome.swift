import Synchronization

/// The first of several racing outcomes (an answer, a deadline, the caller's cancellation), handed to one
/// waiting caller exactly once; later ones are dropped.
///
/// Unlike a task group, the caller does not wait for the losers: a request that ignores its cancellation
/// cannot hold the caller past the deadline. An outcome offered before the caller waits is kept for it.
final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case offered(Value)
        case taken
    }

    private let state = Mutex<State>(.empty)

    /// Offers `value`; true when it is the first, false when another outcome came first.
    @discardableResult
    func offer(_ value: Value) -> Bool {
        let (first, continuation): (Bool, CheckedContinuation<Value, Never>?) = state.withLock { state in
            switch state {
            case .empty:
                state = .offered(value)
                return (true, nil)
            case .waiting(let continuation):
                state = .taken
                return (true, continuation)
            case .offered, .taken:
                return (false, nil)
            }
        }
        continuation?.resume(returning: value)
        return first
    }

    /// Waits for the first outcome (at once when one was offered already). Called once.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready: Value? = state.withLock { state in
                if case .offered(let value) = state {
                    state = .taken
                    return value
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
