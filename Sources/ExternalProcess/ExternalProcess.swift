import Foundation
import Synchronization

/// One program run to completion: the only way passforge starts another
/// process (git for `diff`, rsync and ssh for `publish`).
///
/// Every run has the same shape: the arguments are an array handed to the
/// program as they are (no shell reads them); the child gets its own
/// environment and working directory (passforge never changes its own);
/// secrets are taken out of that environment (`ChildEnvironment`);
/// standard input is a given byte string; both outputs are captured, up to a
/// cap; and the end is an exit status or a signal.
///
/// The wait never holds a thread of Swift's cooperative pool: the outputs are
/// read on two threads of the run's own, and the end arrives through
/// Foundation's termination handler, which resumes the awaiting task
/// (`run()`). `runBlocking()` is for callers that are synchronous themselves
/// (publish's transports): it holds only the caller's thread, and none of the
/// run's work needs the pool, so it cannot deadlock on it.
///
/// swift-subprocess was evaluated instead and not taken (the README's
/// target table says why): 1.0.2 traps ("FileDescriptor was not closed") when
/// the closure form of `run` gets `.array` input, its input pipe needs SIGPIPE
/// ignored process-wide, and it has no synchronous form for publish.
package struct ExternalProcess: Sendable {
    /// The program: a name looked up in the PATH of `environment` (or of
    /// passforge's own), or a path when it holds a `/`.
    package var program: String
    package var arguments: [String]
    /// The child's environment; nil: passforge's own. Either way without its
    /// secrets (`ChildEnvironment`): no child sees the token secret, a password
    /// or a key.
    package var environment: [String: String]?
    /// The child's working directory; nil: passforge's own.
    package var workingDirectory: String?
    /// Bytes on standard input. They come from an unlinked temporary file rather
    /// than a pipe, so a program that exits without reading them all cannot stop
    /// passforge with SIGPIPE.
    package var input: [UInt8]
    /// The most bytes taken from standard output. Past them the program is killed
    /// and the run fails (a host that sends without end must not fill memory).
    package var outputLimit: Int
    /// The most bytes kept of standard error; the rest is read and dropped, so the
    /// program never blocks on a full pipe.
    package var errorOutputLimit: Int
    /// What to install when the program is not found, e.g. "apt-get install git".
    package var installHint: String?
    /// False only where the child is passforge itself (the tests' CLI runs),
    /// which needs its settings: every other child gets no secret.
    package var withholdsSecrets: Bool

    package init(
        _ program: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: [UInt8] = [], outputLimit: Int = 64 << 20,
        errorOutputLimit: Int = 1 << 20, installHint: String? = nil, withholdsSecrets: Bool = true
    ) {
        self.program = program
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.input = input
        self.outputLimit = outputLimit
        self.errorOutputLimit = errorOutputLimit
        self.installHint = installHint
        self.withholdsSecrets = withholdsSecrets
    }

    /// How the program ended.
    package enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "was stopped by signal \(signal)"
            }
        }
    }

    package struct Outcome: Sendable {
        package var termination: Termination
        package var output: [UInt8]
        /// The first `errorOutputLimit` bytes of standard error.
        package var errorOutput: [UInt8]

        package var succeeded: Bool { termination == .exited(0) }
        package var outputText: String { String(decoding: output, as: UTF8.self) }
        package var errorText: String { String(decoding: errorOutput, as: UTF8.self) }
    }

    /// Why a program could not be run to its end. The message names the program,
    /// never its arguments or environment (they may hold a key's path or a token).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// Not in PATH, or the path is not an executable file.
            case notFound
            /// The working directory does not exist.
            case workingDirectoryMissing
            /// More standard output than `outputLimit`: the program was killed.
            case outputLimitExceeded
            /// It could not be started, or its input could not be staged.
            case cannotStart
        }
        package var kind: Kind
        package var description: String
    }

    /// The program's name, for messages.
    package var name: String { program.split(separator: "/").last.map(String.init) ?? program }

    /// The executable's full path: `program` itself when it holds a `/`, else the
    /// first match in the PATH of `environment` (passforge's own when nil); nil
    /// when there is none.
    package static func locate(_ program: String, environment: [String: String]? = nil) -> String? {
        if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) ? program : nil }
        let path = (environment ?? ProcessInfo.processInfo.environment)["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs the program and suspends until it has ended and both outputs are read.
    package func run() async throws(Failure) -> Outcome {
        let run = try start()
        let result = await withCheckedContinuation { continuation in run.whenDone { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Runs the program and blocks the calling thread until it has ended. For
    /// synchronous callers only; async code calls `run()`.
    package func runBlocking() throws(Failure) -> Outcome {
        let run = try start()
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Outcome, Failure>?>(nil)
        run.whenDone { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private func start() throws(Failure) -> RunningProcess {
        guard let executable = Self.locate(program, environment: environment) else {
            let hint = installHint.map { "; install it (\($0))" } ?? ""
            throw Failure(kind: .notFound, description: "\(name) is not installed here (not found in PATH)\(hint)")
        }
        var isFolder: ObjCBool = false
        if let workingDirectory,
            !(FileManager.default.fileExists(atPath: workingDirectory, isDirectory: &isFolder) && isFolder.boolValue)
        {
            throw Failure(
                kind: .workingDirectoryMissing, description: "cannot run \(name) in \(workingDirectory): no such folder"
            )
        }
        let standardInput = try Self.inputFile(holding: input, for: name)
        defer { try? standardInput?.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Always set, so that passforge's own environment reaches the child only through the filter.
        let given = environment ?? ProcessInfo.processInfo.environment
        process.environment = withholdsSecrets ? ChildEnvironment.filtered(given) : given
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        let standardOutput = Pipe()
        let standardError = Pipe()
        process.standardInput = standardInput ?? FileHandle.nullDevice
        process.standardOutput = standardOutput
        process.standardError = standardError
        let running = RunningProcess(process: process, name: name, outputLimit: outputLimit)
        process.terminationHandler = { ended in running.ended(ended) }
        do {
            try process.run()
        } catch {
            throw Failure(kind: .cannotStart, description: "cannot start \(name): \(error.localizedDescription)")
        }
        running.read(standardOutput.fileHandleForReading, limit: outputLimit, killingPast: true)
        running.read(standardError.fileHandleForReading, limit: errorOutputLimit, killingPast: false)
        return running
    }

    /// A temporary file holding `bytes`, open for reading and already unlinked; nil when there are none.
    private static func inputFile(holding bytes: [UInt8], for name: String) throws(Failure) -> FileHandle? {
        guard !bytes.isEmpty else { return nil }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("passforge-input-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard
            FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forReadingAtPath: path)
        else {
            throw Failure(
                kind: .cannotStart,
                description:
                    "cannot stage the input of \(name) in \(FileManager.default.temporaryDirectory.path); check TMPDIR")
        }
        return handle
    }
}

/// A started process: its two readers and its end, gathered into one result.
private final class RunningProcess: @unchecked Sendable {
    // `process` is touched only to kill it and, once it has ended, to read its status.
    private let process: Process
    private let name: String
    private let outputLimit: Int
    private struct State {
        var output: [UInt8] = []
        var errorOutput: [UInt8] = []
        var exceeded = false
        var termination: ExternalProcess.Termination?
        var pendingReaders = 2
        var completion: (@Sendable (Result<ExternalProcess.Outcome, ExternalProcess.Failure>) -> Void)?
    }
    private let state = Mutex(State())

    init(process: Process, name: String, outputLimit: Int) {
        (self.process, self.name, self.outputLimit) = (process, name, outputLimit)
    }

    /// Reads `handle` to its end on a thread of its own (a blocking read must not hold a pool thread).
    /// Keeps `limit` bytes; past them, the output reader kills the program, the error reader drops the rest.
    func read(_ handle: FileHandle, limit: Int, killingPast: Bool) {
        let thread = Thread { [self] in
            var kept: [UInt8] = []
            var exceeded = false
            while case let chunk = handle.availableData, !chunk.isEmpty {
                if kept.count + chunk.count > limit {
                    kept.append(contentsOf: chunk.prefix(limit - kept.count))
                    if killingPast, !exceeded {
                        exceeded = true
                        // SIGKILL: a program that ignores SIGTERM or SIGPIPE and writes on must stop too.
                        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                    }
                    if killingPast { break }
                } else {
                    kept.append(contentsOf: chunk)
                }
            }
            try? handle.close()
            finishReading(kept, isOutput: killingPast, exceeded: exceeded)
        }
        thread.name = "passforge \(name) reader"
        thread.start()
    }

    private func finishReading(_ bytes: [UInt8], isOutput: Bool, exceeded: Bool) {
        let done: Done? = state.withLock { state in
            if isOutput { (state.output, state.exceeded) = (bytes, exceeded) } else { state.errorOutput = bytes }
            state.pendingReaders -= 1
            return Self.finishIfComplete(&state, name: name, outputLimit: outputLimit)
        }
        done?.deliver()
    }

    func ended(_ process: Process) {
        process.terminationHandler = nil  // it holds this object: the cycle ends with the run
        let termination: ExternalProcess.Termination =
            process.terminationReason == .uncaughtSignal
            ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
        let done: Done? = state.withLock { state in
            state.termination = termination
            return Self.finishIfComplete(&state, name: name, outputLimit: outputLimit)
        }
        done?.deliver()
    }

    /// Calls `completion` once, when the program has ended and both outputs are read.
    func whenDone(_ completion: @escaping @Sendable (Result<ExternalProcess.Outcome, ExternalProcess.Failure>) -> Void)
    {
        let done: Done? = state.withLock { state in
            state.completion = completion
            return Self.finishIfComplete(&state, name: name, outputLimit: outputLimit)
        }
        done?.deliver()
    }

    private struct Done {
        var completion: @Sendable (Result<ExternalProcess.Outcome, ExternalProcess.Failure>) -> Void
        var result: Result<ExternalProcess.Outcome, ExternalProcess.Failure>
        func deliver() { completion(result) }
    }

    private static func finishIfComplete(_ state: inout State, name: String, outputLimit: Int) -> Done? {
        guard state.pendingReaders == 0, let termination = state.termination, let completion = state.completion else {
            return nil
        }
        state.completion = nil
        let result: Result<ExternalProcess.Outcome, ExternalProcess.Failure> =
            state.exceeded
            ? .failure(
                .init(
                    kind: .outputLimitExceeded,
                    description: "\(name) sent more than \(outputLimit) bytes on its standard output; it was stopped"))
            : .success(.init(termination: termination, output: state.output, errorOutput: state.errorOutput))
        return Done(completion: completion, result: result)
    }
}
