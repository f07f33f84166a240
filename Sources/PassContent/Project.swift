import AtomicFiles

/// A passforge project, as Zola's `Site` is a site: its root (the folder of passforge.yml), its
/// configuration, and where each of its folders and files is. Every default path of every command
/// resolves from it, so that `passforge offers --config /srv/site/passforge.yml`, run from another
/// folder, reads `/srv/site/state/registrations.sqlite` and `/srv/site/output`, as DESIGN.md's
/// command line says: defaults are the project's own folders, relative to its root.
///
/// A path typed on the command line (`--output ../public`) is relative to the working directory, as
/// a shell user expects; a default is relative to the root. `ProjectRoot` spells both one way.
package struct Project: Sendable {
    package let root: ProjectRoot
    /// passforge.yml: `--config`, else the root's when present; nil when there is none.
    package let configurationFile: String?
    package let contentDirectory: String
    package let templatesDirectory: String
    package let outputDirectory: String

    /// The project's folders: each given path (as typed, or nil for its default below the root).
    package init(
        configurationFile: String?, content: String? = nil, templates: String? = nil, output: String? = nil,
        workingDirectory: String = AtomicFileSystem.currentDirectory
    ) {
        let root = ProjectRoot.locate(configurationFile: configurationFile, workingDirectory: workingDirectory)
        self.root = root
        if let configurationFile {
            self.configurationFile = configurationFile
        } else {
            let found = root.spelling(of: nil, default: Self.configurationFileName)
            self.configurationFile = AtomicFileSystem.exists(found) ? found : nil
        }
        contentDirectory = root.spelling(of: content, default: "content")
        templatesDirectory = root.spelling(of: templates, default: "templates")
        outputDirectory = root.spelling(of: output, default: "output")
    }

    package static let configurationFileName = "passforge.yml"

    /// `relative` below the root, spelled as the project's other paths are: a default path of a command
    /// (`state/registrations.sqlite`, `preview`).
    package func path(_ relative: String) -> String { root.spelling(of: nil, default: relative) }

    /// A path given on the command line (relative to the working directory), or `defaultPath` below the root.
    package func path(given: String?, default defaultPath: String) -> String {
        root.spelling(of: given, default: defaultPath)
    }

    /// `.passforge/` of the project: the token secret's fallback and the development chain.
    package var stateDirectory: String { path(".passforge") }

    /// The configuration: passforge.yml when the project has one, else the empty one.
    package func loadConfiguration() throws(ContentErrors) -> ProjectConfiguration {
        guard let configurationFile else { return ProjectConfiguration() }
        return try ProjectConfiguration.load(file: configurationFile)
    }
}
