import AtomicFiles
import ExternalProcess
import Foundation
import PassContent
package import PassRender
import WalletTree

/// A git revision of the project, unpacked into a temporary folder with
/// `git archive` (the repository and its working tree are not touched).
package final class GitSnapshot: Sendable {
    /// The project folder inside the snapshot: the same path below the
    /// repository's top as the project's root.
    package let projectDirectory: String
    private let root: String

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Unpacks `revision` of the repository that holds the project root `directory`.
    package init(revision: String, projectRoot directory: String) async throws {
        let prefix = try await Self.git(["rev-parse", "--show-prefix"], in: directory).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let commit = try await Self.git(
            ["rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], in: directory,
            failure: "\(revision) is not a commit of this repository; give a branch, "
                + "tag or commit, e.g. origin/main or HEAD~1"
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        let root = NSTemporaryDirectory() + "passforge-diff-\(commit.prefix(12))-\(UUID().uuidString.prefix(8))"
        try AtomicFileSystem.createDirectory(root)
        do {
            // The archive goes to a file and tar reads it from there: two processes, no shell between them.
            let archive = root + ".tar"
            defer { AtomicFileSystem.removeTree(archive) }
            _ = try await Self.git(
                ["archive", "--format=tar", "--output=\(archive)", commit], in: directory,
                failure: "cannot unpack \(revision) with git archive")
            let unpack = try await ExternalProcess(
                "tar", ["-x", "-f", archive, "-C", root], installHint: "apt-get install tar"
            ).run()
            guard unpack.succeeded else {
                throw Failure(
                    description: "cannot unpack \(revision): tar \(unpack.termination): "
                        + "\(unpack.errorText.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
        } catch {
            AtomicFileSystem.removeTree(root)
            throw error
        }
        self.root = root
        projectDirectory = prefix.isEmpty ? root : (root as NSString).appendingPathComponent(prefix)
        if !AtomicFileSystem.exists(projectDirectory) {
            try AtomicFileSystem.createDirectory(projectDirectory)
        }
    }

    deinit { AtomicFileSystem.removeTree(root) }

    /// Runs git in `directory` (its working directory, not passforge's) and returns what it printed.
    static func git(_ arguments: [String], in directory: String, failure: String? = nil) async throws -> String {
        let outcome: ExternalProcess.Outcome
        do {
            outcome = try await ExternalProcess(
                "git", arguments, workingDirectory: directory, installHint: "apt-get install git"
            ).run()
        } catch {
            throw Failure(description: "passforge diff needs git: \(error.description)")
        }
        guard outcome.succeeded else {
            let message = outcome.errorText.trimmingCharacters(in: .whitespacesAndNewlines)
            throw Failure(
                description: failure.map { message.isEmpty ? $0 : "\($0): \(message)" }
                    ?? "git \(arguments.first ?? "") \(outcome.termination): \(message); "
                    + "run passforge diff inside a git repository")
        }
        return outcome.outputText
    }
}

extension PassDiff {
    /// Renders the project whose root is `directory` as the build would,
    /// without signing: `renderer` is the build's pipeline over that project's folders (the command line makes
    /// it). The rendering's file names are then given relative to `directory`,
    /// so that both sides of a diff read the same (content/…). The working
    /// directory of passforge is not changed.
    package static func render(projectDirectory directory: String, renderer: any UnsignedRenderer) -> UnsignedRendering
    {
        var rendering = renderer.renderWithoutSigning()
        let root = ProjectRoot(path: directory)
        rendering.contentFiles = rendering.contentFiles.map { root.relativeSpelling(of: $0) }
        rendering.diagnostics = rendering.diagnostics.map { $0.relative(to: root) }
        for index in rendering.passes.indices {
            rendering.passes[index].sourceFile = root.relativeSpelling(of: rendering.passes[index].sourceFile)
            rendering.passes[index].warnings = rendering.passes[index].warnings.map { $0.relative(to: root) }
        }
        return rendering
    }
}

extension ContentDiagnostic {
    /// The diagnostic with its file names, and the root's spelling in its messages, relative to `root`.
    func relative(to root: ProjectRoot) -> ContentDiagnostic {
        var copy = self
        copy.location.file = root.relativeSpelling(of: location.file)
        copy.message = root.relativeSpelling(inText: message)
        copy.notes = notes.map {
            (
                location: SourceLocation(
                    file: root.relativeSpelling(of: $0.location.file), line: $0.location.line,
                    column: $0.location.column),
                message: root.relativeSpelling(inText: $0.message)
            )
        }
        return copy
    }
}
