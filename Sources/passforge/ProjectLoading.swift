import ArgumentParser
import Foundation
import PassBuild
import PassContent

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

/// Runs a library call and turns its failures into messages for people and exit code 1.
func runReportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let failure as BuildFailure {
        Console.report(failure.diagnostics)
        let errors = failure.errorCount
        let warnings = failure.diagnostics.count - errors
        Console.error("\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s"); nothing was written")
        throw ExitCode.failure
    } catch let error as ExitCode {
        throw error
    } catch {
        Console.error("error: \(error)")
        throw ExitCode.failure
    }
}
