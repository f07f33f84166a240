import ArgumentParser
import AtomicFiles
import Foundation
import PassBuild
import PassContent

/// Options every command that reads the project shares: where the configuration,
/// the content, the templates and the output tree are.
///
/// The folders are read through `ProjectRoot`: each has one spelling
/// (`content`, `output`, …, relative to the project's root), however it was
/// typed, so that `--content ./content` and `--content content` share the
/// build state's incremental work.
struct ProjectOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "Project configuration; its folder is the project's root.",
            discussion: "Default: ./passforge.yml when present; the project's root is then the working directory.",
            valueName: "file"))
    var givenConfig: String?

    @Option(
        name: .customLong("content"),
        help: ArgumentHelp("Folder of pass definitions (default: content, in the project's root).", valueName: "dir"))
    var givenContent: String?

    @Option(
        name: .customLong("templates"),
        help: ArgumentHelp("Folder of templates (default: templates, in the project's root).", valueName: "dir"))
    var givenTemplates: String?

    @Option(
        name: .customLong("output"),
        help: ArgumentHelp("Output tree (default: output, in the project's root).", valueName: "dir"))
    var givenOutput: String?
}

extension ProjectOptions {
    /// The project these options name: its root (the folder of --config, else the working directory), its
    /// configuration file and folders. Every default path of every command resolves from it.
    var project: Project {
        Project(configurationFile: givenConfig, content: givenContent, templates: givenTemplates, output: givenOutput)
    }

    /// The folder of --config, else the working directory.
    var root: ProjectRoot { project.root }

    /// The configuration file: --config, else passforge.yml in the root when present, else none.
    var config: String? { project.configurationFile }

    var content: String { project.contentDirectory }
    var templates: String { project.templatesDirectory }
    var output: String { project.outputDirectory }

    /// The configuration: --config, else passforge.yml in the root when present, else none.
    func loadConfiguration() throws -> ProjectConfiguration {
        do {
            return try project.loadConfiguration()
        } catch {
            Console.report(error.diagnostics)
            throw ExitCode.failure
        }
    }

    /// The build's settings. `snapshot`: a copy of the project elsewhere (a git
    /// revision unpacked by `diff`), whose content and templates are read
    /// instead, at the same paths below it; the configuration and `.passforge/`
    /// stay the project's own. `configuration`: passforge.yml as the caller already read it (`serve --push`
    /// reads it once), else read here.
    func settings(
        developmentSigning: Bool, allowHTTP: Bool, jobs: Int?, snapshot: String? = nil,
        configuration: ProjectConfiguration? = nil
    ) throws -> BuildSettings {
        let project = project
        let root = project.root
        func placed(_ spelled: String) -> String { snapshot.map { root.placing(spelled, under: $0) } ?? spelled }
        var settings = BuildSettings(
            contentDirectory: placed(project.contentDirectory), templatesDirectory: placed(project.templatesDirectory),
            outputDirectory: project.outputDirectory, configuration: try configuration ?? loadConfiguration(),
            projectStateDirectory: project.stateDirectory,
            allowsDevelopmentSigning: developmentSigning, allowsHTTPWebService: allowHTTP)
        if let jobs { settings.jobs = max(1, jobs) }
        return settings
    }
}
