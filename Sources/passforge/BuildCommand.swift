import ArgumentParser
import Foundation
import PassBuild
import PassServer

struct Build: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate the content and render signed passes into the output tree.",
        discussion: """
        Incremental: a pass is signed again only when its content entry, template, images,
        configuration or signing identity changed. Passes removed from content are removed
        from the tree. On any error nothing is written.

        Examples:
          passforge build
          passforge build --output public --jobs 2
          passforge build --push                  build, then push the changes to devices
          CI=true PASSFORGE_TOKEN_SECRET=… passforge build --development-signing
        """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Sign with the development chain even when CI=true (passes will not install on devices).")
    var developmentSigning = false

    @Flag(help: "Accept an http:// webServiceURL (works only on development devices).")
    var allowHTTPWebService = false

    @Option(help: "Signing threads (default: all cores).")
    var jobs: Int?

    @Flag(name: .shortAndLong, help: "Print only errors and the summary.")
    var quiet = false

    @Flag(help: "Then push: tell the devices holding changed passes to fetch them (see `passforge push`).")
    var push = false

    func run() async throws {
        let settings = try project.settings(developmentSigning: developmentSigning, allowHTTP: allowHTTPWebService, jobs: jobs)
        let quiet = self.quiet
        let report = try runReportingErrors {
            try PassBuilder(settings: settings).build { event in if !quiet { Console.progress(event) } }
        }
        if !quiet { Console.report(report.warnings) }
        for key in report.removed { Console.print("removed \(key)") }
        if report.usedDevelopmentSigning { Console.warnDevelopmentSigning() }
        try await refreshDeviceIndices(report)
        Console.print(report.summary)
        if push { try await PushOperation(project: project, quiet: quiet).run() }
    }

    /// DESIGN.md "The one idea": a build rewrites the indices of the devices
    /// holding the passes it changed or removed — when the store is reachable.
    private func refreshDeviceIndices(_ report: BuildReport) async throws {
        let changed = report.built + report.removed
        guard !changed.isEmpty, let (store, _) = try await StoreOpening.open(onlyIfPresent: true) else { return }
        do {
            let state = try BuildState.load(from: project.output)
            let count = try await DeviceIndexFiles(outputDirectory: project.output)
                .refresh(passes: changed, store: store, snapshot: PublishedTree.Snapshot(state: state))
            if count > 0 && !quiet { Console.error("refreshed \(count) device index file\(count == 1 ? "" : "s")") }
        } catch {
            Console.error("warning: the passes are built, but the device indices could not be refreshed (\(error)); they are refreshed on the next registration or build")
        }
    }
}

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every pass against Apple's rules without signing or writing anything.",
        discussion: """
        Prints every problem as `file:line:col: error: message [rule]` and exits 1 on any error.

        Examples:
          passforge validate
          passforge validate --content content/flights
        """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Accept an http:// webServiceURL (works only on development devices).")
    var allowHTTPWebService = false

    @Flag(help: "Allow the development signing chain under CI=true.")
    var developmentSigning = false

    func run() throws {
        let settings = try project.settings(developmentSigning: developmentSigning, allowHTTP: allowHTTPWebService, jobs: nil)
        let warnings = try runReportingErrors { try PassBuilder(settings: settings).validate() }
        Console.report(warnings)
        Console.print("no errors, \(warnings.count) warning\(warnings.count == 1 ? "" : "s")")
    }
}
