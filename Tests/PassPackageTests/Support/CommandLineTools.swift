import Foundation

/// The result of running a command-line tool.
struct CommandResult {
    var status: Int32
    var output: String
    var error: String
    var outputBytes: [UInt8]
}

struct CommandFailure: Error, CustomStringConvertible {
    var command: [String]
    var result: CommandResult
    var description: String {
        "\(command.joined(separator: " ")) exited \(result.status): \(result.error)\(result.output)"
    }
}

/// Runs `tool` (found on PATH) with `arguments` in `directory`.
/// Output goes through files so large outputs cannot fill a pipe and block.
@discardableResult
func run(_ tool: String, _ arguments: [String], in directory: String, check: Bool = true) throws -> CommandResult {
    let outputPath = directory + "/.out-" + UUID().uuidString
    let errorPath = directory + "/.err-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardOutput = FileHandle(forWritingAtPath: outputPath)
    process.standardError = FileHandle(forWritingAtPath: errorPath)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let outputBytes = [UInt8](FileManager.default.contents(atPath: outputPath) ?? Data())
    let result = CommandResult(
        status: process.terminationStatus,
        output: String(decoding: outputBytes, as: UTF8.self),
        error: String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self),
        outputBytes: outputBytes
    )
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
