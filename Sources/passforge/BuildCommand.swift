import ArgumentParser
import Foundation
import PassBuild
import PassPush

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
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
        let report = try Console.runReportingErrors {
            try PassBuilder(settings: settings).build { event in if !quiet { Console.progress(event) } }
        }
        if !quiet { Console.report(report.warnings) }
        for key in report.removed { Console.print("removed \(key)") }
        if report.usedDevelopmentSigning { Console.warnDevelopmentSigning() }
        try await refreshDeviceIndices(report)
        Console.print(report.summary)
        if push { try await PushCommand.push(project: project, quiet: quiet) }
    }

    /// A build rewrites the indices of the devices holding the passes it
    /// changed or removed — when there is a registration store to read.
    private func refreshDeviceIndices(_ report: BuildReport) async throws {
        guard !(report.built + report.removed).isEmpty, let (store, _) = try await StoreOpening.open(onlyIfPresent: true) else { return }
        do {
            let count = try await DeviceIndexFiles(outputDirectory: project.output).refresh(after: report, store: store)
            if count > 0 && !quiet { Console.error("refreshed \(count) device index file\(count == 1 ? "" : "s")") }
        } catch {
            Console.error("warning: the passes are built, but the device indices could not be refreshed (\(error)); they are refreshed on the next registration or build")
        }
    }
}
