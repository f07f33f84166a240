import AtomicFiles
package import ConcurrencySupport
import Foundation
package import PassContent
package import PassRender
package import WalletTree

/// Everything a build needs to know, gathered by the command line from
/// flags, the environment and passforge.yml (in that order of precedence).
package struct BuildSettings: Sendable {
    package var contentDirectory: String
    package var templatesDirectory: String
    package var outputDirectory: String
    package var configuration: ProjectConfiguration
    /// `.passforge/` of the project: token secret fallback and development PKI.
    package var projectStateDirectory: String
    package var environment: [String: String]
    /// `--development-signing`: allowed to sign with the development chain under CI.
    package var allowsDevelopmentSigning: Bool
    /// `--allow-http-web-service`: accept an http:// webServiceURL (development devices only).
    package var allowsHTTPWebService: Bool
    /// Worker threads for signing; defaults to every core.
    package var jobs: Int
    /// The real-time clock in nanoseconds, the clock file times come from: a content file is trusted
    /// by its stamp once it is two seconds older than this (`FileStamp.isSettled`). Tests move it.
    package var clock: @Sendable () -> Int64 = { FileStamp.now() }
    /// Whether an unchanged pass must also be on disk in the output folder to
    /// be reused. False when the build state came from the published tree
    /// (`build --state-from`): the bytes of unchanged passes are there, not
    /// here, and only what changes needs signing and publishing.
    package var requiresLocalPassFiles = true
    /// Makes the landing page beside every download link (`LandingPages`); nil for none. The command line sets
    /// the preview's renderer here: the build cannot depend on the preview, which depends on it.
    package var landingPages: (any LandingPageMaking)?
    /// Called at each step of the commit ("staged", "journaled", "applying", "applied"): tests copy the tree
    /// there, which is what a build killed at that point leaves (`Checkpoints`). None in real use.
    package var checkpoints: any Checkpoints = NoCheckpoints()
    /// `--timings`: the build keeps the wall and CPU time of each phase (`BuildReport.phases`).
    package var recordsTimings = false

    package init(
        contentDirectory: String = "content", templatesDirectory: String = "templates",
        outputDirectory: String = "output",
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

    /// A project laid out as `passforge init` makes one: passforge.yml, content/, templates/, output/
    /// and .passforge/ in `folder`.
    package init(
        projectFolder folder: String, environment: [String: String],
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws {
        self.init(
            contentDirectory: "\(folder)/content", templatesDirectory: "\(folder)/templates",
            outputDirectory: "\(folder)/output",
            configuration: try ProjectConfiguration.load(file: "\(folder)/passforge.yml"),
            projectStateDirectory: "\(folder)/.passforge",
            environment: environment, jobs: jobs)
    }

    var isCI: Bool { environment["CI"] == "true" }
}

/// What a build reports while it runs.
package enum BuildProgress: Sendable {
    case planning(files: Int)
    /// Items signed of those to sign (passes and orders alike).
    case signing(done: Int, total: Int)
    case writing(passes: Int, orders: Int)
    case note(String)
}

/// The result of a build, for the summary line.
package struct BuildReport: Sendable {
    package var built: [String] = []
    package var unchanged = 0
    package var removed: [String] = []
    package var warnings: [ContentDiagnostic] = []
    package var seconds: Double = 0
    package var usedDevelopmentSigning = false
    package var rolledForward = false
    package var updateTag: Int64?
    /// Passes in each DeviceCheck offer's pool after the build, by offer (passforge.yml's offers only).
    package var offerPoolSizes: [String: Int] = [:]
    /// The state the build committed (or found, when nothing changed): handed to the index refresh
    /// and to push, so that neither reads `state.json` again.
    package var committedState = BuildState()
    /// Each phase's times, when the settings asked for them (`recordsTimings`).
    package var phases: [BuildPhaseTime] = []

    package var summary: String {
        let time = seconds < 10 ? String(format: "%.2f s", seconds) : String(format: "%.1f s", seconds)
        return
            "built \(built.count), unchanged \(unchanged), removed \(removed.count), warnings \(warnings.count), \(time)"
    }
}

/// Thrown when content has errors: every diagnostic, nothing written.
package struct BuildFailure: Error, Sendable, CustomStringConvertible {
    package var diagnostics: [ContentDiagnostic]
    package var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    package var errorCount: Int { diagnostics.filter(\.isError).count }
}
