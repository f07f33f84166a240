import AtomicFiles
import Foundation

/// The project's root folder: where passforge.yml is, or else the working
/// directory. The project's folders (content, templates with their images,
/// output, `.passforge/`) are spelled relative to it, one way each, so that
/// `--content ./content`, `--content content/` and `--content $PWD/content`
/// name the same files in the build state and share its incremental work.
///
/// Nothing here (nor anywhere in passforge) changes the process's working
/// directory: a child process gets its own (`ExternalProcess`), and a
/// snapshot of the project elsewhere is read through paths below it
/// (`placing(_:under:)`).
package struct ProjectRoot: Sendable, Hashable {
    /// The root, absolute and lexically normalised (no `.`, `..` or trailing `/`).
    package let path: String
    /// The working directory the paths given on the command line are relative to, absolute and normalised.
    package let workingDirectory: String

    /// `path` relative to `workingDirectory`, or absolute.
    package init(path: String, workingDirectory: String = AtomicFileSystem.currentDirectory) {
        self.workingDirectory = Self.normalized(workingDirectory)
        self.path = Self.normalized(path.hasPrefix("/") ? path : self.workingDirectory + "/" + path)
    }

    /// The folder of `configurationFile` when one is given (--config), else the working directory.
    package static func locate(
        configurationFile: String?,
        workingDirectory: String = AtomicFileSystem.currentDirectory
    ) -> ProjectRoot {
        guard let configurationFile else { return ProjectRoot(path: ".", workingDirectory: workingDirectory) }
        return ProjectRoot(path: configurationFile + "/..", workingDirectory: workingDirectory)
    }

    /// The one spelling of a project path passforge reads it by and records it
    /// under. `given` is as typed on the command line (relative to the working
    /// directory, or absolute); nil means `defaultPath`, relative to the root.
    /// Below the root, it is spelled relative to it when the root is the
    /// working directory ("./content/" → "content"), absolute otherwise; a
    /// path outside the root is absolute.
    package func spelling(of given: String?, default defaultPath: String) -> String {
        let absolute =
            given.map { Self.normalized($0.hasPrefix("/") ? $0 : workingDirectory + "/" + $0) }
            ?? Self.normalized(path + "/" + defaultPath)
        return path == workingDirectory ? relativeSpelling(of: absolute) : absolute
    }

    /// `path` (a spelling from `spelling(of:default:)`, or a path below the
    /// root) relative to the root when it lies below it; as it is otherwise.
    /// For names shown to people and compared across two copies of a project.
    package func relativeSpelling(of other: String) -> String {
        guard other.hasPrefix("/") else { return other }
        if other == path { return "." }
        let prefix = path == "/" ? "/" : path + "/"
        return other.hasPrefix(prefix) ? String(other.dropFirst(prefix.count)) : other
    }

    /// `text` with each `<root>/` removed: a message that names files by their full path, as `relativeSpelling` names them.
    package func relativeSpelling(inText text: String) -> String {
        path == "/" ? text : text.replacingOccurrences(of: path + "/", with: "")
    }

    /// A project path (a spelling from `spelling(of:default:)`) moved into
    /// `folder`, a copy of the project (a git snapshot): the same path below
    /// `folder` as below the root. A path outside the root stays as it is.
    package func placing(_ spelled: String, under folder: String) -> String {
        let relative = relativeSpelling(of: spelled.hasPrefix("/") ? spelled : Self.normalized(path + "/" + spelled))
        guard !relative.hasPrefix("/") else { return relative }
        return relative == "." ? folder : Self.normalized(folder + "/" + relative)
    }

    /// `path` with `.` and empty components dropped and `x/..` folded, by its
    /// text alone (a `..` after a symbolic link is folded as if it were a folder).
    package static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." {
                    parts.removeLast()
                } else if !path.hasPrefix("/") {
                    parts.append(part)
                }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
