import ConcurrencySupport
import Synchronization
import TestSupport
import Testing

@testable import PassBuild

/// The build as named phases (`--timings`), and the commit's checkpoints, which tests use instead of killing a
/// process (`Checkpoints`).
@Suite struct BuildPhaseTests {
    static let secret = "phase-token-secret-0123456789"

    /// Records each checkpoint the build reaches, in order.
    final class Recorder: Checkpoints {
        private let points = Mutex<[String]>([])
        var reached: [String] { points.withLock { $0 } }
        func reached(_ point: String) { points.withLock { $0.append(point) } }
    }

    @Test func aBuildWithTimingsNamesEachPhaseInOrder() throws {
        let project = ProjectFixture(passCount: 3)
        var settings = try project.buildSettings(secret: Self.secret)
        settings.recordsTimings = true
        let report = try PassBuilder(settings: settings).build()
        #expect(report.built.count == 3)
        #expect(
            report.phases.map(\.name) == [
                "load", "scan", "classify", "evaluate and sign", "check", "new state", "bundles", "landing pages",
                "staged state",
                "staged", "journaled", "applying", "applied",
            ])
        let pipeline = try #require(report.phases.first { $0.name == "evaluate and sign" })
        #expect(pipeline.parts.map(\.name) == ["parse and evaluate", "sign"])
        #expect(pipeline.parts.allSatisfy { $0.cpuSeconds > 0 }, "\(pipeline.parts)")
        #expect(report.phases.allSatisfy { $0.seconds >= 0 && $0.cpuSeconds >= 0 && $0.residentMiB > 0 })

        // A build that changes nothing ends after its check; without --timings it keeps no phases.
        let noop = try PassBuilder(settings: settings).build()
        #expect(noop.phases.map(\.name) == ["load", "scan", "classify", "evaluate and sign", "check"])
        settings.recordsTimings = false
        #expect(try PassBuilder(settings: settings).build().phases.isEmpty)
    }

    @Test func theCommitReachesEachCheckpointOnceInOrder() throws {
        let project = ProjectFixture(passCount: 2)
        var settings = try project.buildSettings(secret: Self.secret)
        let recorder = Recorder()
        settings.checkpoints = recorder
        _ = try PassBuilder(settings: settings).build()
        #expect(recorder.reached == ["staged", "journaled", "applying", "applied"])
        // Nothing changed: nothing is committed, no checkpoint is reached.
        _ = try PassBuilder(settings: settings).build()
        #expect(recorder.reached.count == 4)
    }
}
