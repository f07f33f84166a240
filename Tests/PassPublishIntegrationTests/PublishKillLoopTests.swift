import Foundation
import TestSupport
import Testing

/// The outside runs, as a loop: a real `passforge publish` to a folder SIGKILLed at random moments 10 times,
/// then a complete publish, after which the folder must hold exactly the build's served files (passes, token
/// names, downloads, landing pages). One round in the suite; `PASSFORGE_PUBLISH_KILL_ROUNDS=30` (make faults)
/// runs more, each over a new build with changed, new and removed passes.
@Suite struct PublishKillLoopTests {
    @Test func publishesKilledAtRandomMomentsAreCompletedExactly() async throws {
        let built = try BuiltProject(passCount: 120)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = folder.file("site")
        let environment = ProcessInfo.processInfo.environment.merging(built.environment) { $1 }
        let started = ContinuousClock.now
        let first = try await built.project.passforge(["publish", dest], environment: built.environment)
        #expect(first.status == 0, "\(first.output)")
        let span = max(ContinuousClock.now - started, .milliseconds(50))
        let rounds = Int(ProcessInfo.processInfo.environment["PASSFORGE_PUBLISH_KILL_ROUNDS"] ?? "") ?? 1
        for round in 1...max(rounds, 1) {
            built.project.writeList(count: 90 + (round % 4) * 20, points: { $0 % 3 == 0 ? $0 + round : $0 })
            let build = try await built.project.passforge(["build"], environment: built.environment)
            try #require(build.status == 0, "\(build.output)")
            var kills: [Duration] = []
            for _ in 0..<10 {
                let publish = try BackgroundProcess(
                    passforgeExecutable(), ["publish", dest], directory: built.project.root,
                    environment: environment)
                // Not a wait for a condition: the random moment of the kill, over the length of a whole publish.
                let moment = span * Double.random(in: 0...1)
                try await Task.sleep(for: moment)
                await publish.kill()
                kills.append(moment)
            }
            let complete = try await built.project.passforge(["publish", dest], environment: built.environment)
            #expect(complete.status == 0, "round \(round): \(complete.output)")
            let held = PublishKillWindowTests.servedFiles(dest)
            let expected = PublishKillWindowTests.servedFiles(built.output)
            let extra = Set(held.keys).subtracting(expected.keys).sorted()
            let missing = Set(expected.keys).subtracting(held.keys).sorted()
            let differing = expected.keys.filter { held[$0] != nil && held[$0] != expected[$0] }.sorted()
            #expect(
                extra.isEmpty && missing.isEmpty && differing.isEmpty,
                "round \(round), kills at \(kills): extra \(extra), missing \(missing), differing \(differing)")
        }
    }
}
