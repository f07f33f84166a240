package import DeviceCheck
import Synchronization

/// Whether Apple accepts passforge's DeviceCheck key, as the last claims saw it: what `/health` and
/// `/metrics` show. A 401 or 403 (or "Bad Authorization Token") means the team, key ID or .p8 key is
/// wrong, and stays so until an operator fixes it; a later accepted call clears it.
package final class DeviceCheckStatus: Sendable {
    private struct State {
        var misconfiguration: String?
        var loggedCauses: Set<String> = []
        var refusals = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Records a refusal of the key. Returns true the first time this cause is seen, when the caller logs
    /// it at error level (every claim would otherwise log the same line).
    package func recordMisconfiguration(_ error: DeviceCheckError) -> Bool {
        let cause = "\(error.status.map(String.init) ?? "-") \(error.message)"
        return state.withLock { state in
            state.misconfiguration = error.description
            state.refusals += 1
            // Bounded: Apple's table has a handful of such answers, each with a short body.
            guard state.loggedCauses.count < 64 else { return false }
            return state.loggedCauses.insert(cause).inserted
        }
    }

    /// Apple accepted a call: the key works.
    package func recordAccepted() {
        state.withLock { $0.misconfiguration = nil }
    }

    /// What is wrong with the key now, nil when the last call to Apple was accepted.
    package var misconfiguration: String? { state.withLock { $0.misconfiguration } }

    /// Refusals of the key since the server started.
    package var refusals: Int { state.withLock { $0.refusals } }
}
