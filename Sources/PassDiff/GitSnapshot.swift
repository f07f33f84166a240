import Foundation
import PassBuild

/// A git revision of the project, unpacked into a temporary folder with
/// `git archive` (the repository and its working tree are not touched).
package final class GitSnapshot: Sendable {
    /// The project folder inside the snapshot: the same path below the
    /// repository's top as the current folder.
    package let projectDirectory: String
    private let root: String

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Unpacks `revision` of the repository that holds `directory`.
    package init(revision: String, directory: String = FileManager.default.currentDirectoryPath) throws {
        let prefix = try Self.git(["rev-parse", "--show-prefix"], in: directory).trimmingCharacters(in: .whitespacesAndNewlines)
        let commit = try Self.git(["rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], in: directory,
                                  failure: "\(revision) is not a commit of this repository; give a branch, tag or commit, e.g. origin/main or HEAD~1")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        root = NSTemporaryDirectory() + "passforge-diff-\(commit.prefix(12))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        projectDirectory = prefix.isEmpty ? root : (root as NSString).appendingPathComponent(prefix)
        let archive = Process()
        archive.executableURL = URL(fileURLWithPath: "/bin/sh")
        archive.arguments = ["-c", "git archive --format=tar \"$1\" | tar -x -C \"$2\"", "sh", commit, root]
        archive.currentDirectoryURL = URL(fileURLWithPath: directory)
        let errors = Pipe()
        archive.standardError = errors
        try archive.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        archive.waitUntilExit()
        guard archive.terminationStatus == 0 else {
            try? FileManager.default.removeItem(atPath: root)
            throw Failure(description: "cannot unpack \(revision): \(String(decoding: message, as: UTF8.self))")
        }
        if !FileManager.default.fileExists(atPath: projectDirectory) {
            try FileManager.default.createDirectory(atPath: projectDirectory, withIntermediateDirectories: true)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    static func git(_ arguments: [String], in directory: String, failure: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: failure ?? "git \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)); run passforge diff inside a git repository")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

extension PassDiff {
    /// Renders the project in `directory` as the build would, without
    /// signing. The folder becomes the working directory meanwhile, so that
    /// file names in both sides of a diff read the same (content/…).
    package static func render(projectDirectory directory: String, settings: () throws -> BuildSettings) throws -> UnsignedRendering {
        let previous = FileManager.default.currentDirectoryPath
        guard FileManager.default.changeCurrentDirectoryPath(directory) else {
            throw GitSnapshot.Failure(description: "cannot enter \(directory)")
        }
        defer { FileManager.default.changeCurrentDirectoryPath(previous) }
        return PassBuilder(settings: try settings()).renderWithoutSigning()
    }
}
