import WalletTree
import Foundation
import PassPackage
import Synchronization

/// The wall time of each phase of a build, written to standard error at the
/// end when PASSFORGE_BUILD_TIMES is set: for the benchmark and for
/// profiling, not an interface.
final class BuildTimings: Sendable {
    private let start = Date()
    private let isEnabled: Bool
    private let phases = Mutex<[(name: String, at: Double, memory: String)]>([])

    init(environment: [String: String]) { isEnabled = environment["PASSFORGE_BUILD_TIMES"] != nil }

    /// Notes that the phase ending now is `name`.
    func mark(_ name: String) {
        guard isEnabled else { return }
        let now = Date().timeIntervalSince(start)
        let memory = Self.residentMemory()
        phases.withLock { $0.append((name, now, memory)) }
    }

    func report() {
        guard isEnabled else { return }
        var previous = 0.0
        let line = phases.withLock { $0 }.map { phase in
            defer { previous = phase.at }
            return "\(phase.name) \(String(format: "%.3f", phase.at - previous)) [\(phase.memory)]"
        }.joined(separator: ", ")
        FileHandle.standardError.write(Data("build phases (s) [resident/peak, heap in use MiB]: \(line)\n".utf8))
    }

    /// `VmRSS/VmHWM` in MiB from /proc/self/status (\"?\" where there is none), and the heap in use.
    private static func residentMemory() -> String {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "?" }
        func mebibytes(_ field: String) -> String {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
                  let kibibytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first(where: { !$0.isEmpty }).flatMap({ Int($0) }) else { return "?" }
            return String(kibibytes / 1024)
        }
        return "\(mebibytes("VmRSS:"))/\(mebibytes("VmHWM:")), heap \(ProcessTuning.heapInUse >> 20) anon \(mebibytes("RssAnon:")) file \(mebibytes("RssFile:"))"
    }
}
