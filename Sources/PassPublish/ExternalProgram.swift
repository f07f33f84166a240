import Foundation
import Synchronization

/// A program run to completion (rsync, ssh), with bytes on its standard
/// input and both outputs captured.
struct ExternalProgram: Sendable {
    struct Outcome: Sendable {
        var status: Int32
        var output: [UInt8]
        var errorOutput: String
    }

    /// The executable's full path.
    var path: String

    /// Finds `name` in `PATH`; nil when it is not installed.
    init?(named name: String, environment: [String: String]) {
        if name.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: name) else { return nil }
            path = name
            return
        }
        let folders = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        guard let found = folders.map({ "\($0)/\(name)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        path = found
    }

    /// Runs the program and waits for it. Standard input comes from a
    /// temporary file rather than a pipe: a program that exits without reading
    /// it all cannot stop us with SIGPIPE.
    /// At most `outputLimit` bytes of standard output are taken: past them the program is stopped and the run
    /// is an error (a host that sends without end must not fill memory).
    func run(_ arguments: [String], input: [UInt8] = [], environment: [String: String], outputLimit: Int = 64 << 20) throws(PublishError) -> Outcome {
        let inputPath = FileManager.default.temporaryDirectory.appendingPathComponent("passforge-input-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: inputPath, contents: Data(input)),
              let standardInput = FileHandle(forReadingAtPath: inputPath) else {
            throw PublishError("cannot write a temporary file in \(FileManager.default.temporaryDirectory.path); check TMPDIR")
        }
        defer {
            try? standardInput.close()
            try? FileManager.default.removeItem(atPath: inputPath)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        let standardOutput = Pipe(), standardError = Pipe()
        process.standardInput = standardInput
        process.standardOutput = standardOutput
        process.standardError = standardError
        do {
            try process.run()
        } catch {
            throw PublishError("cannot run \(path): \(error.localizedDescription)")
        }
        let errorBytes = Mutex(Data())
        let group = DispatchGroup()
        let errorReader = standardError.fileHandleForReading
        DispatchQueue.global().async(group: group) {
            let data = errorReader.readDataToEndOfFile()
            errorBytes.withLock { $0 = data }
        }
        var output = Data()
        let reader = standardOutput.fileHandleForReading
        while case let chunk = reader.availableData, !chunk.isEmpty {
            output.append(chunk)
            if output.count > outputLimit {
                process.terminate()
                try? reader.close()
                group.wait()
                process.waitUntilExit()
                throw PublishError("\((path as NSString).lastPathComponent) sent more than \(outputLimit >> 20) MB, more than a published build's state may be; stopped")
            }
        }
        group.wait()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: Array(output),
                       errorOutput: String(decoding: errorBytes.withLock { $0 }, as: UTF8.self))
    }
}
