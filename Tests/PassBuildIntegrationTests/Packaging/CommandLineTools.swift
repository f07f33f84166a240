import Foundation
import TestSupport

/// The result of running a command-line tool.
struct CommandResult {
    var status: Int32
    var output: String
    var error: String
}

struct CommandFailure: Error, CustomStringConvertible {
    var command: [String]
    var result: CommandResult
    var description: String {
        "\(command.joined(separator: " ")) exited \(result.status): \(result.error)\(result.output)"
    }
}

/// Runs `tool` (found on PATH) with `arguments` in `directory`, through the tests' process harness
/// (whose readers drain both outputs on threads of their own, so a large output cannot block).
@discardableResult
func run(_ tool: String, _ arguments: [String], in directory: String, check: Bool = true) throws -> CommandResult {
    let ran = try runProcess(tool, arguments, directory: directory)
    let result = CommandResult(status: ran.status, output: ran.stdout, error: ran.stderr)
    if check && result.status != 0 { throw CommandFailure(command: [tool] + arguments, result: result) }
    return result
}

func makeTemporaryDirectory(_ label: String) throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("passforge-\(label)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// `run` for async tests: suspends while the tool runs, holding none of the test runner's threads.
@discardableResult
func run(_ tool: String, _ arguments: [String], in directory: String, check: Bool = true) async throws
    -> CommandResult
{
    let ran = try await runProcessWithoutBlocking(tool, arguments, directory: directory)
    let result = CommandResult(status: ran.status, output: ran.stdout, error: ran.stderr)
    if check && result.status != 0 { throw CommandFailure(command: [tool] + arguments, result: result) }
    return result
}
