import AtomicFiles
import Foundation
import TextEscaping

/// The folders whose files may become part of a pass: the templates folder
/// and the content folder, by their real paths.
///
/// A template image, a `pass.json`, an `.lproj` file or a pass's own image
/// may be a symbolic link, but only to a file inside one of these folders.
/// A pass is signed and published, and `passforge diff` runs on pull requests:
/// a link to `~/.ssh/id_ed25519` (or an `images:` path such as
/// `../../etc/passwd`) must neither end up in a signed pass nor show its first
/// bytes or its size in an error message. So every such file is found by its
/// real path (all links followed) and read from there only when that path is
/// inside.
package struct ProjectBoundary: Sendable {
    /// The folders as given (for messages), and their real paths.
    package let folders: [String]
    private let realFolders: [String]

    /// The files inside `folders` (those that do not exist contain nothing).
    package init(folders: [String]) {
        self.folders = folders
        realFolders = folders.compactMap(Self.realPath)
    }

    /// Why a file is not read.
    package enum Refusal: Error, Sendable, Hashable {
        /// It does not exist (or a link in its path leads nowhere), or cannot be read.
        case unreadable
        /// Its real path is outside every folder.
        case outside
        /// Its path holds a control or bidirectional character (see ``hasUnsafeName(_:)``).
        case unsafeName
    }

    /// Whether `path` holds a C0 or C1 control character (a newline, an escape), a line or paragraph
    /// separator or a bidirectional formatting character. A content file's path is shown in build
    /// output, logs and pull-request comments and kept in the build state: a name like
    /// `"new\n\n<!--\n.yml"` would start lines of its own there.
    package static func hasUnsafeName(_ path: String) -> Bool {
        path.unicodeScalars.contains(where: TerminalText.isNeutralized)
    }

    /// `path` with each character ``hasUnsafeName(_:)`` looks for shown as `?`, for a message.
    package static func shownName(_ path: String) -> String {
        var shown = ""
        for scalar in path.unicodeScalars {
            shown.unicodeScalars.append(TerminalText.isNeutralized(scalar) ? "?" : scalar)
        }
        return shown
    }

    /// The real path of `path` when it is inside one of the folders.
    package func containedPath(_ path: String) -> Result<String, Refusal> {
        guard let real = Self.realPath(path) else { return .failure(.unreadable) }
        let inside = realFolders.contains { folder in
            real == folder || real.hasPrefix(folder == "/" ? "/" : folder + "/")
        }
        return inside ? .success(real) : .failure(.outside)
    }

    /// The bytes of the file at `path`, read from its real path when that is inside one of the folders.
    package func read(_ path: String) -> Result<[UInt8], Refusal> {
        containedPath(path).flatMap { real in
            // A regular file only: a folder, a pipe or a device is nothing a pass holds.
            guard let bytes = AtomicFileSystem.readFile(real) else { return .failure(.unreadable) }
            return .success(bytes)
        }
    }

    /// The message for a content file (found by the walk) that links outside the folders.
    package func outsideContentFile(_ path: String) -> ContentDiagnostic {
        .error(
            at: SourceLocation(file: path), rule: "content.outside-project",
            "this content file is a symbolic link to a file outside \(folderList); passforge reads "
                + "only files of the project, so replace the link with a copy of the file")
    }

    /// "templates/ or content/": the folders a file must be in, for messages.
    package var folderList: String {
        folders.map { $0.hasSuffix("/") ? $0 : $0 + "/" }.joined(separator: " or ")
    }

    /// `path` with every symbolic link, `.` and `..` resolved (realpath(3)); nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
