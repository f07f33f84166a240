import Foundation
import Synchronization

/// The wall time of each phase of a build, written to standard error at the
/// end when PASSFORGE_BUILD_TIMES is set: for the benchmark and for
/// profiling, not an interface.
final class BuildTimings: Sendable {
    private let start = Date()
    private let isEnabled: Bool
    private let phases = Mutex<[(name: String, at: Double)]>([])

    init(environment: [String: String]) { isEnabled = environment["PASSFORGE_BUILD_TIMES"] != nil }

    /// Notes that the phase ending now is `name`.
    func mark(_ name: String) {
        guard isEnabled else { return }
        let now = Date().timeIntervalSince(start)
        phases.withLock { $0.append((name, now)) }
    }

    func report() {
        guard isEnabled else { return }
        var previous = 0.0
        let line = phases.withLock { $0 }.map { phase in
            defer { previous = phase.at }
            return "\(phase.name) \(String(format: "%.3f", phase.at - previous))"
        }.joined(separator: ", ")
        FileHandle.standardError.write(Data("build phases (s): \(line)\n".utf8))
    }
}
