import Foundation
import Synchronization

/// The result of running a real process.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var output: String { stdout + stderr }
}

/// Runs a program to completion, capturing its output.
@discardableResult
public func runProcess(_ executable: String, _ arguments: [String], directory: String? = nil,
                       environment: [String: String]? = nil, input: Data? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
    process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    if let input {
        let inPipe = Pipe()
        process.standardInput = inPipe
        try process.run()
        inPipe.fileHandleForWriting.write(input)
        try inPipe.fileHandleForWriting.close()
    } else {
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }
    // Read both pipes concurrently so a chatty process cannot block on a full pipe.
    let errData = LockedBox(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errData.set(err.fileHandleForReading.readDataToEndOfFile())
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData.get(), as: UTF8.self))
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
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/passforge").path
}
