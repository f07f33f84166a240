import ExternalProcess
import Foundation
import Synchronization

/// The result of running a real process.
public struct ProcessResult: Sendable {
    public init(status: Int32, stdout: String, stderr: String) {
        (self.status, self.stdout, self.stderr) = (status, stdout, stderr)
    }
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var output: String { stdout + stderr }
}

/// Runs a program to completion, capturing its output, and blocks the calling
/// thread until it ends (for synchronous tests and helpers). It goes through
/// ExternalProcess, whose readers and wait use threads of their own, never
/// the cooperative pool's: a test on the pool that calls it holds only its
/// own thread. Async tests call `runProcessWithoutBlocking`.
@discardableResult
public func runProcess(
    _ executable: String, _ arguments: [String], directory: String? = nil,
    environment: [String: String]? = nil, input: Data? = nil
) throws -> ProcessResult {
    ProcessResult(
        try testProcess(executable, arguments, directory: directory, environment: environment, input: input)
            .runBlocking())
}

/// `runProcess` for async tests: suspends until the program ends, holding no thread.
@discardableResult
public func runProcessWithoutBlocking(
    _ executable: String, _ arguments: [String], directory: String? = nil,
    environment: [String: String]? = nil, input: Data? = nil
) async throws -> ProcessResult {
    ProcessResult(
        try await testProcess(executable, arguments, directory: directory, environment: environment, input: input).run()
    )
}

/// A program name runs through /usr/bin/env, as a shell would find it: one not installed exits 127 rather than throwing.
/// The environment goes as given, secrets too: the tests hand passforge its settings (token secret, signing password).
private func testProcess(
    _ executable: String, _ arguments: [String], directory: String?,
    environment: [String: String]?, input: Data?
) -> ExternalProcess {
    let isPath = executable.hasPrefix("/")
    return ExternalProcess(
        isPath ? executable : "/usr/bin/env", isPath ? arguments : [executable] + arguments,
        environment: environment, workingDirectory: directory, input: input.map(Array.init) ?? [],
        outputLimit: 1 << 30, errorOutputLimit: 1 << 30, withholdsSecrets: false)
}

extension ProcessResult {
    init(_ outcome: ExternalProcess.Outcome) {
        let status: Int32 =
            switch outcome.termination {
            case .exited(let status): status
            case .signalled(let signal): signal
            }
        self.init(status: status, stdout: outcome.outputText, stderr: outcome.errorText)
    }
}

/// A value shared between threads.
public final class LockedBox<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    public init(_ value: Value) { self.value = Mutex(value) }
    public func get() -> Value { value.withLock { $0 } }
    public func set(_ newValue: Value) { value.withLock { $0 = newValue } }
}

/// Path of the built `passforge` executable, next to the test bundle.
public func passforgeExecutable() -> String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var folder = (exe as NSString).deletingLastPathComponent
    for _ in 0..<4 {
        let candidate = folder + "/passforge"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        folder = (folder as NSString).deletingLastPathComponent
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/passforge").path
}
