import Foundation
import PassContent

/// Everything a build needs to know, gathered by the command line from
/// flags, the environment and passforge.yml (in that order of precedence).
public struct BuildSettings: Sendable {
    public var contentDirectory: String
    public var templatesDirectory: String
    public var outputDirectory: String
    public var configuration: ProjectConfiguration
    /// `.passforge/` of the project: token secret fallback and development PKI.
    public var projectStateDirectory: String
    public var environment: [String: String]
    /// `--development-signing`: allowed to sign with the development chain under CI.
    public var allowsDevelopmentSigning: Bool
    /// `--allow-http-web-service`: accept an http:// webServiceURL (development devices only).
    public var allowsHTTPWebService: Bool
    /// Worker threads for signing; defaults to every core.
    public var jobs: Int
    /// Whether an unchanged pass must also be on disk in the output folder to
    /// be reused. False when the build state came from the published tree
    /// (`build --state-from`): the bytes of unchanged passes are there, not
    /// here, and only what changes needs signing and publishing.
    public var requiresLocalPassFiles = true

    public init(
        contentDirectory: String = "content", templatesDirectory: String = "templates", outputDirectory: String = "output",
        configuration: ProjectConfiguration = ProjectConfiguration(), projectStateDirectory: String = ".passforge",
        environment: [String: String] = ProcessInfo.processInfo.environment, allowsDevelopmentSigning: Bool = false,
        allowsHTTPWebService: Bool = false, jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) {
        self.contentDirectory = contentDirectory
        self.templatesDirectory = templatesDirectory
        self.outputDirectory = outputDirectory
        self.configuration = configuration
        self.projectStateDirectory = projectStateDirectory
        self.environment = environment
        self.allowsDevelopmentSigning = allowsDevelopmentSigning
        self.allowsHTTPWebService = allowsHTTPWebService
        self.jobs = max(1, jobs)
    }

    var isCI: Bool { environment["CI"] == "true" }
}

/// What a build reports while it runs.
public enum BuildProgress: Sendable {
    case planning(files: Int)
    case signing(done: Int, total: Int)
    case writing(passes: Int)
    case note(String)
}

/// The result of a build, for the summary line.
public struct BuildReport: Sendable {
    public var built: [String] = []
    public var unchanged = 0
    public var removed: [String] = []
    public var warnings: [ContentDiagnostic] = []
    public var seconds: Double = 0
    public var usedDevelopmentSigning = false
    public var rolledForward = false
    public var updateTag: Int64?

    public var summary: String {
        let time = seconds < 10 ? String(format: "%.2f s", seconds) : String(format: "%.1f s", seconds)
        return "built \(built.count), unchanged \(unchanged), removed \(removed.count), warnings \(warnings.count), \(time)"
    }
}

/// Thrown when content has errors: every diagnostic, nothing written.
public struct BuildFailure: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ContentDiagnostic]
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    public var errorCount: Int { diagnostics.filter(\.isError).count }
}
