import ArgumentParser
import Foundation
import PassBuild
import PassContent

/// Options every command that reads the project shares: where the configuration,
/// the content, the templates and the output tree are.
struct ProjectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Project configuration.", discussion: "Default: ./passforge.yml when present.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Folder of pass definitions.", valueName: "dir"))
    var content: String = "content"

    @Option(help: ArgumentHelp("Folder of templates.", valueName: "dir"))
    var templates: String = "templates"

    @Option(help: ArgumentHelp("Output tree.", valueName: "dir"))
    var output: String = "output"
}

extension ProjectOptions {
    /// The configuration: --config, else ./passforge.yml when present, else none.
    func loadConfiguration() throws -> ProjectConfiguration {
        let path = config ?? (FileManager.default.fileExists(atPath: "passforge.yml") ? "passforge.yml" : nil)
        guard let path else { return ProjectConfiguration() }
        do {
            return try ProjectConfiguration.load(file: path)
        } catch {
            Console.report(error.diagnostics)
            throw ExitCode.failure
        }
    }

    func settings(developmentSigning: Bool, allowHTTP: Bool, jobs: Int?) throws -> BuildSettings {
        var settings = BuildSettings(
            contentDirectory: content, templatesDirectory: templates, outputDirectory: output,
            configuration: try loadConfiguration(), allowsDevelopmentSigning: developmentSigning,
            allowsHTTPWebService: allowHTTP)
        if let jobs { settings.jobs = max(1, jobs) }
        return settings
    }
}
