import AtomicFiles
import ArgumentParser
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
    @Option(name: .customLong("config"),
            help: ArgumentHelp("Project configuration; its folder is the project's root.",
                               discussion: "Default: ./passforge.yml when present; the project's root is then the working directory.",
                               valueName: "file"))
    var givenConfig: String?

    @Option(name: .customLong("content"), help: ArgumentHelp("Folder of pass definitions (default: content, in the project's root).", valueName: "dir"))
    var givenContent: String?

    @Option(name: .customLong("templates"), help: ArgumentHelp("Folder of templates (default: templates, in the project's root).", valueName: "dir"))
    var givenTemplates: String?

    @Option(name: .customLong("output"), help: ArgumentHelp("Output tree (default: output, in the project's root).", valueName: "dir"))
    var givenOutput: String?
}

extension ProjectOptions {
    /// The folder of --config, else the working directory.
    var root: ProjectRoot { ProjectRoot.locate(configurationFile: givenConfig) }

    /// The configuration file: --config, else passforge.yml in the root when present, else none.
    var config: String? {
        if let givenConfig { return givenConfig }
        let path = root.spelling(of: nil, default: "passforge.yml")
        return AtomicFileSystem.exists(path) ? path : nil
    }

    var content: String { root.spelling(of: givenContent, default: "content") }
    var templates: String { root.spelling(of: givenTemplates, default: "templates") }
    var output: String { root.spelling(of: givenOutput, default: "output") }

    /// The configuration: --config, else passforge.yml in the root when present, else none.
    func loadConfiguration() throws -> ProjectConfiguration {
        guard let path = config else { return ProjectConfiguration() }
        do {
            return try ProjectConfiguration.load(file: path)
        } catch {
            Console.report(error.diagnostics)
            throw ExitCode.failure
        }
    }

    /// The build's settings. `snapshot`: a copy of the project elsewhere (a git
    /// revision unpacked by `diff`), whose content and templates are read
    /// instead, at the same paths below it; the configuration and `.passforge/`
    /// stay the project's own.
    func settings(developmentSigning: Bool, allowHTTP: Bool, jobs: Int?, snapshot: String? = nil) throws -> BuildSettings {
        let root = root
        func placed(_ spelled: String) -> String { snapshot.map { root.placing(spelled, under: $0) } ?? spelled }
        var settings = BuildSettings(
            contentDirectory: placed(content), templatesDirectory: placed(templates), outputDirectory: output,
            configuration: try loadConfiguration(), projectStateDirectory: root.spelling(of: nil, default: ".passforge"),
            allowsDevelopmentSigning: developmentSigning, allowsHTTPWebService: allowHTTP)
        if let jobs { settings.jobs = max(1, jobs) }
        return settings
    }
}
