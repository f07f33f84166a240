import Foundation
import PassPackage
import Synchronization

/// One phase of a build as `passforge build --timings` shows it.
package struct BuildPhaseTime: Sendable {
    /// The phase's name: load, scan, classify, evaluate and sign, check, bundles, landing pages, new state,
    /// then the commit's steps (staged, journaled, applying, applied).
    package var name: String
    /// Wall-clock seconds.
    package var seconds: Double
    /// CPU seconds of every thread of the process in the phase (user and system).
    package var cpuSeconds: Double
    /// Resident memory at the phase's end, MiB.
    package var residentMiB: Int
    /// For the pipeline of evaluation and signing: CPU seconds its workers spent in each part (evaluate, sign).
    package var parts: [(name: String, cpuSeconds: Double)] = []
}

/// The wall and CPU time of each phase of a build, kept when the build is asked for them (`--timings`, or
/// PASSFORGE_BUILD_TIMES for the benchmark script): the build's phases are named in code, and this names
/// where its time goes, as Zola's `build()` does.
final class BuildTimings: Sendable {
    let isEnabled: Bool
    private let state: Mutex<(phases: [BuildPhaseTime], wall: Double, cpu: Double)>

    init(isEnabled: Bool) {
        self.isEnabled = isEnabled
        state = Mutex(([], Self.wallClock(), Self.processCPU()))
    }

    /// Notes that the phase ending now is `name`; `parts` splits its workers' CPU time.
    func mark(_ name: String, parts: [(name: String, cpuSeconds: Double)] = []) {
        guard isEnabled else { return }
        let (wall, cpu, memory) = (Self.wallClock(), Self.processCPU(), Self.residentMiB())
        state.withLock { state in
            state.phases.append(
                BuildPhaseTime(
                    name: name, seconds: wall - state.wall, cpuSeconds: cpu - state.cpu,
                    residentMiB: memory, parts: parts))
            (state.wall, state.cpu) = (wall, cpu)
        }
    }

    /// Runs `body` as the phase `name`.
    func phase<T, E: Error>(_ name: String, _ body: () throws(E) -> T) throws(E) -> T {
        defer { mark(name) }
        return try body()
    }

    var phases: [BuildPhaseTime] { state.withLock { $0.phases } }

    /// The phases on one line of standard error, for scripts/bench-build.py (PASSFORGE_BUILD_TIMES):
    /// "build phases (s) [wall/CPU, resident MiB]: name wall/cpu [MiB], ...".
    func reportOnStandardError() {
        let line = phases.map { phase in
            let parts = phase.parts.map { " \($0.name) \(String(format: "%.2f", $0.cpuSeconds))" }.joined()
            return
                "\(phase.name) \(String(format: "%.3f/%.3f", phase.seconds, phase.cpuSeconds)) [\(phase.residentMiB)\(parts)]"
        }.joined(separator: ", ")
        FileHandle.standardError.write(
            Data("build phases (s) [wall/CPU, resident MiB, CPU s of the parts]: \(line)\n".utf8))
    }

    /// The CPU time the calling thread has used, in seconds: the pipeline's workers add up their parts with it.
    static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func wallClock() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func processCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `VmRSS` in MiB from /proc/self/status (0 where there is none).
    private static func residentMiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kibibytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({
                Int($0)
            })
        else { return 0 }
        return kibibytes / 1024
    }
}

/// CPU time a pipeline's workers spend in each of its parts, added up over every worker.
final class PartTimes: Sendable {
    private let seconds = Mutex<[String: Double]>([:])
    let isEnabled: Bool

    init(isEnabled: Bool) { self.isEnabled = isEnabled }

    func add(_ part: String, _ value: Double) {
        guard isEnabled else { return }
        seconds.withLock { $0[part, default: 0] += value }
    }

    var parts: [(name: String, cpuSeconds: Double)] {
        seconds.withLock { $0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension BuildPhaseTime {
    /// One line of `--timings`: name, wall seconds, CPU seconds, resident MiB, and the parts' CPU seconds.
    package var line: String {
        let name = self.name.padding(toLength: 18, withPad: " ", startingAt: 0)
        let parts =
            self.parts.isEmpty
            ? ""
            : "  ("
                + self.parts.map { "\($0.name) \(String(format: "%.2f", $0.cpuSeconds))" }
                .joined(separator: ", ") + " CPU s)"
        return "\(name)\(String(format: "%8.3f %8.3f %6d", seconds, cpuSeconds, residentMiB))\(parts)"
    }

    /// The header of `line`'s columns.
    package static let header = "phase".padding(toLength: 18, withPad: " ", startingAt: 0) + "  wall s    CPU s    MiB"
}
