import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program left running for a test (`passforge serve`, nginx, sshd), its output captured. Every wait is an
/// awaited event — a line in its output, its exit — that holds none of the test runner's threads: Foundation's
/// handlers run on threads of their own and resume the waiting test. A wait's deadline is a watchdog on a
/// dispatch timer, for a program that never says what the test awaits; it is not a pause.
public final class BackgroundProcess: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    // `Process` is not Sendable: it is only started here, and read after the start (pid, isRunning).
    private nonisolated(unsafe) let process = Process()
    private let state = Locked(State())
    private let name: String

    /// The state, shared with Foundation's handlers (a Mutex cannot be captured).
    private final class Locked<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    private struct Waiter {
        var check: @Sendable (_ stdout: String, _ stderr: String, _ status: Int32?) -> Bool
        var resume: @Sendable () -> Void
    }

    private struct State {
        var stdout = ""
        var stderr = ""
        var status: Int32?
        var waiters: [UUID: Waiter] = [:]

        /// Removes and returns the waiters whose condition now holds.
        mutating func ready() -> [Waiter] {
            let done = waiters.filter { $0.value.check(stdout, stderr, status) }
            for key in done.keys { waiters[key] = nil }
            return Array(done.values)
        }
    }

    /// Starts `executable` (a path) with `arguments`; `environment` is the whole environment of the program.
    public init(
        _ executable: String, _ arguments: [String], directory: String? = nil,
        environment: [String: String]? = nil
    ) throws {
        name = (executable as NSString).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = pipe(isOutput: true)
        process.standardError = pipe(isOutput: false)
        process.terminationHandler = { [state] ended in
            let waiters = state.withLock { state in
                state.status = ended.terminationStatus
                return state.ready()
            }
            for waiter in waiters { waiter.resume() }
        }
        try process.run()
    }

    private func pipe(isOutput: Bool) -> Pipe {
        let pipe = Pipe()
        pipe.fileHandleForReading.readabilityHandler = { [state] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            let text = String(decoding: data, as: UTF8.self)
            let waiters = state.withLock { state in
                if isOutput { state.stdout += text } else { state.stderr += text }
                return state.ready()
            }
            for waiter in waiters { waiter.resume() }
        }
        return pipe
    }

    public var stdout: String { state.withLock { $0.stdout } }
    public var stderr: String { state.withLock { $0.stderr } }
    public var output: String { state.withLock { $0.stdout + $0.stderr } }
    public var processIdentifier: Int32 { process.processIdentifier }
    /// The exit status (or the signal that ended it), nil while it runs.
    public var status: Int32? { state.withLock { $0.status } }
    public var isRunning: Bool { status == nil }

    /// Suspends until `match` finds its value in the output (stdout, stderr), then returns it. Throws when the
    /// program exits without it, or when `timeout` passes first (a program that never prints it).
    public func value<T: Sendable>(
        _ what: String, timeout: Duration = .seconds(30),
        match: @escaping @Sendable (_ stdout: String, _ stderr: String) -> T?
    ) async throws -> T {
        let found = Mutex<T?>(nil)
        let ended = await event(timeout: timeout) { stdout, stderr, status in
            if let value = match(stdout, stderr) {
                found.withLock { $0 = value }
                return true
            }
            return status != nil
        }
        if let value = found.withLock({ $0 }) { return value }
        let output = self.output
        throw Failure(
            ended
                ? "\(name) exited (\(status ?? 0)) before \(what): \(output)"
                : "\(name) did not show \(what) within \(timeout): \(output)")
    }

    /// Suspends until the output contains `text`; false if the program ended or `timeout` passed first.
    public func contains(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        (try? await value(text, timeout: timeout) { stdout, stderr in
            stdout.contains(text) || stderr.contains(text) ? true : nil
        }) != nil
    }

    /// Suspends until the program has ended; returns its status, or nil if `timeout` passed first.
    @discardableResult
    public func exit(timeout: Duration = .seconds(60)) async -> Int32? {
        _ = await event(timeout: timeout) { _, _, status in status != nil }
        return status
    }

    /// Sends `signal` (SIGTERM by default) if it still runs.
    public func signal(_ signal: Int32 = SIGTERM) {
        if isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// SIGTERM, then SIGKILL if it still runs after `grace`; returns once it has ended, with its status.
    @discardableResult
    public func stop(grace: Duration = .seconds(10)) async -> Int32 {
        signal(SIGTERM)
        if let status = await exit(timeout: grace) { return status }
        return await kill()
    }

    /// SIGKILL: no chance to finish anything. Returns once it has ended.
    @discardableResult
    public func kill() async -> Int32 {
        signal(SIGKILL)
        return await exit(timeout: .seconds(3600)) ?? SIGKILL
    }

    /// For synchronous tests and helpers: blocks the calling thread (never call it from an async test) until the
    /// output contains `text`; false if the program ended or `timeout` passed first.
    public func blockingWait(for text: String, timeout: Duration = .seconds(30)) -> Bool {
        let found = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        whenever(
            timeout: timeout,
            { stdout, stderr, status in
                let contains = stdout.contains(text) || stderr.contains(text)
                if contains { found.withLock { $0 = true } }
                return contains || status != nil
            }, then: { _ in done.signal() })
        done.wait()
        return found.withLock { $0 }
    }

    /// For synchronous tests and helpers: blocks the calling thread until the program has ended; its status, or
    /// nil if `timeout` passed first.
    @discardableResult
    public func blockingWaitForExit(timeout: Duration = .seconds(60)) -> Int32? {
        let done = DispatchSemaphore(value: 0)
        whenever(timeout: timeout, { _, _, status in status != nil }, then: { _ in done.signal() })
        done.wait()
        return status
    }

    /// Suspends until `check` holds (true) or `timeout` passes (false).
    private func event(
        timeout: Duration, _ check: @escaping @Sendable (String, String, Int32?) -> Bool
    ) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            whenever(timeout: timeout, check, then: { continuation.resume(returning: $0) })
        }
    }

    /// Calls `then` once: with true when `check` holds (now, or after a change of output or the exit), with false
    /// when `timeout` passes first.
    private func whenever(
        timeout: Duration, _ check: @escaping @Sendable (String, String, Int32?) -> Bool,
        then: @escaping @Sendable (Bool) -> Void
    ) {
        let id = UUID()
        let called = Mutex(false)
        let finish: @Sendable (Bool) -> Void = { held in
            let first = called.withLock { called in
                defer { called = true }
                return !called
            }
            if first { then(held) }
        }
        let holds = state.withLock { state in
            if check(state.stdout, state.stderr, state.status) { return true }
            state.waiters[id] = Waiter(check: check, resume: { finish(true) })
            return false
        }
        if holds { return finish(true) }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [state] in
            state.withLock { _ = $0.waiters.removeValue(forKey: id) }
            finish(false)
        }
    }

    deinit {
        if status == nil { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
