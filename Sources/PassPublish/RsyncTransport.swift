import AtomicFiles
import Foundation
import WalletTree

/// Publishing to `[user@]host:path` with rsync over ssh.
///
/// rsync writes each file to a hidden temporary name and renames it into
/// place, so a reader sees the old file or the new one. Names that already
/// exist for a pass (its token and download links) are replaced by the
/// host's `ln` and `mv` rather than by rsync, which would delete them
/// before linking them again.
struct RsyncTransport: PublishTransport {
    let rsync: ExternalProgram
    let shell: RemoteShell
    /// The ssh command line handed to rsync's `-e` (PASSFORGE_SSH_COMMAND's words, quoted for rsync).
    let sshCommand: String

    init(userHost: String, path: String, environment: [String: String]) throws(PublishError) {
        let destination = "\(userHost):\(path)"
        let root = try Self.remoteRoot(path, destination: destination)
        let text =
            environment["PASSFORGE_SSH_COMMAND"].flatMap {
                $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0
            } ?? "ssh"
        let command = try SSHCommandLine(parsing: text)
        sshCommand = command.rsyncArgument
        guard let ssh = ExternalProgram(named: command.program, environment: environment) else {
            throw PublishError(
                .programMissing,
                "\(command.program) is not installed here, and \(destination) needs it; install the OpenSSH client (apt-get install openssh-client), or set PASSFORGE_SSH_COMMAND"
            )
        }
        guard let rsync = ExternalProgram(named: "rsync", environment: environment) else {
            throw PublishError(
                .programMissing,
                "rsync is not installed here, and \(destination) needs it; install it (apt-get install rsync), on the host too"
            )
        }
        self.rsync = rsync
        shell = RemoteShell(
            ssh: ssh, sshOptions: command.options, userHost: userHost, root: root, environment: environment)
    }

    /// The folder as the host sees it: `~/site` and `site` are under the
    /// login's home, which is where ssh starts. rsync hands the path to the
    /// remote shell, so only plain characters are accepted.
    static func remoteRoot(_ path: String, destination: String) throws(PublishError) -> String {
        var root = path
        if root == "~" || root.isEmpty { root = "." }
        if root.hasPrefix("~/") { root.removeFirst(2) }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+,=@%-")
        guard root.allSatisfy(allowed.contains), !root.hasPrefix("-") else {
            throw PublishError(
                .invalidDestination,
                "\(destination): the remote folder may hold only letters, digits and . _ / + , = @ % - (and not start with -); rename it, or link it under a plain name"
            )
        }
        return root
    }

    private var destination: String { "\(shell.userHost):\(shell.root)" }

    func fetchState() throws -> DestinationState {
        let limit = BuildState.maximumPublishedSize + 3 * BuildState.maximumPublishedListSize + (1 << 20)
        let outcome = try shell.run(
            RemoteShell.fetchStateScript, action: "read the build state at \(destination)", outputLimit: limit)
        let bytes = outcome.output
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            throw PublishError(.remoteFailed, "cannot read the build state at \(destination): the host gave no answer")
        }
        switch String(decoding: bytes[..<newline], as: UTF8.self) {
        case let answer where answer.hasPrefix("symlink "):
            throw PublishError(
                .unsafePath,
                "\(destination)/\(BuildState.quoted(String(answer.dropFirst(8)))) is a symbolic link; passforge reads the published state only from regular files inside the destination: replace it with the file, or publish again"
            )
        case "missing-folder": return .missingFolder
        case "no-state": return .noState
        case "state":
            // state.json NUL downloads.csv NUL bundles.json NUL landing-pages.txt NUL (file NUL)…; a missing file is empty
            let parts = bytes[(newline + 1)...].split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
            guard parts.count >= 5 else {
                throw PublishError(
                    .remoteFailed, "cannot read the build state at \(destination): the answer was cut short; try again")
            }
            let files = parts.dropFirst(4).filter { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) }
            return .published(
                PublishedBuild(
                    state: parts[0], downloadsCSV: parts[1].isEmpty ? nil : parts[1],
                    bundlesJSON: parts[2].isEmpty ? nil : parts[2],
                    bundleFiles: files.filter { $0.hasSuffix(".pkpasses") },
                    landingPages: parts[3].isEmpty ? nil : parts[3],
                    landingFiles: files.filter(LandingComparison.isLandingFile)))
        case let other:
            throw PublishError(
                .invalidPublishedState,
                "cannot read the build state at \(destination): unexpected answer \(other.prefix(80).debugDescription); does the login shell print text?"
            )
        }
    }

    func createDestination() throws {
        _ = try shell.run(RemoteShell.createFolderScript, action: "create \(destination)")
    }

    func lockDestination() throws -> (any DestinationLock)? { nil }

    /// One rsync for the files and their new links (`-H` links them at the
    /// host as they are linked here), then one ssh command that replaces
    /// the existing links and flushes the host's file system. Landing files come after, in an rsync of their
    /// own: rsync sends in sorted order, and `X.html` sorts before the `X.pkpass` it links.
    func upload(_ files: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws {
        let items = files.filter { !LandingComparison.isLandingFile($0.path) }
        let landing = files.filter { LandingComparison.isLandingFile($0.path) }
        if !items.isEmpty {
            try copy(
                items.flatMap { [$0.path] + $0.newLinks }, from: localRoot,
                options: ["--times", "--omit-dir-times", "--hard-links"],
                action: "upload passes to \(destination)")
            progress(items.reduce(0) { $0 + 1 + $1.newLinks.count })
            let pairs = items.flatMap { upload in upload.replacedLinks.flatMap { [upload.path, $0] } }
            _ = try shell.run(RemoteShell.replaceLinksScript, lines: pairs, action: "link the passes at \(destination)")
            progress(items.reduce(0) { $0 + $1.fileCount })
        }
        guard !landing.isEmpty else { return }
        try copy(
            landing.map(\.path), from: localRoot, options: ["--times", "--omit-dir-times"],
            action: "upload landing pages to \(destination)")
        progress(files.reduce(0) { $0 + $1.fileCount })
    }

    /// `--ignore-times`: the state is always sent (as a delta), even when its
    /// size and time match. rsync sends in sorted order, which is the order
    /// asked for: bundles.json, downloads.csv, state.json.
    func uploadState(_ names: [String], from localRoot: String) throws {
        try copy(
            names, from: localRoot, options: ["--times", "--ignore-times"],
            action: "upload the build state to \(destination)")
    }

    func remove(_ paths: [String], emptyFolders folders: [String]) throws {
        guard !paths.isEmpty else { return }
        _ = try shell.run(
            RemoteShell.removeScript, arguments: folders, lines: paths, action: "remove files at \(destination)")
    }

    /// `rsync --files-from=-`: exactly these paths, relative to both roots, in
    /// rsync's order (sorted: bundles.json and downloads.csv land before state.json).
    private func copy(_ paths: [String], from localRoot: String, options: [String], action: String) throws {
        // A local path with a colon before its first slash would read as host:path to rsync.
        let source = localRoot.hasPrefix("/") ? localRoot : "./\(localRoot)"
        let arguments = options + ["--from0", "--files-from=-", "-e", sshCommand, "\(source)/", "\(destination)/"]
        let list: [UInt8] = paths.flatMap { Array($0.utf8) + [0] }
        let outcome = try rsync.run(arguments, input: list, environment: shell.environment)
        guard outcome.status == 0 else {
            throw RemoteFailure.explain(
                program: "rsync", status: outcome.status, errorOutput: outcome.errorOutput,
                userHost: shell.userHost, root: shell.root, action: action)
        }
    }
}
