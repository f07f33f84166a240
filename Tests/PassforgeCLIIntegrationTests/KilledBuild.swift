import Foundation
import Testing
import TestSupport

/// Starts `passforge build` stalled at `point` and SIGKILLs it there.
func killBuild(_ project: ProjectFixture, env: [String: String], at point: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: passforgeExecutable())
    process.arguments = ["build"]
    process.currentDirectoryURL = URL(fileURLWithPath: project.root)
    var environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
    environment["PASSFORGE_TEST_STALL"] = point
    environment["CI"] = nil
    process.environment = environment
    let stderr = Pipe()
    process.standardError = stderr
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    var seen = ""
    let deadline = Date().addingTimeInterval(60)
    while !seen.contains("stalled at \(point)"), Date() < deadline {
        let chunk = stderr.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        seen += String(decoding: chunk, as: UTF8.self)
    }
    #expect(seen.contains("stalled at \(point)"), "\(seen)")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
}
