import ArgumentParser
import ConcurrencySupport
import Foundation
import PassBuild
import PassContent
import PassPreview
import PassPublish
import PassPush
import WalletTree

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Validate the content and render signed passes into the output tree.",
        discussion: """
            Incremental: a pass is signed again only when its content entry, template, images, configuration or signing identity changed. Passes removed from content are removed from the tree. On any error nothing is written.

            In CI, start from the published tree with --state-from: a fresh clone then signs only what changed, and every other pass keeps its bytes, update tag and ETag. Under CI=true a build with no previous state is refused unless --initial is given or DEST has no build yet.

            Examples:
              passforge build
              passforge build --output public --jobs 2
              passforge build --push
              passforge build --state-from deploy@passes.example.com:/srv/passforge/output
              CI=true passforge build --initial --development-signing
              passforge build --timings

            --timings prints, to standard error, each phase of the build as it is named in the code (load, scan, classify, evaluate and sign, check, new state, bundles, landing pages, staged state, and the commit's steps staged, journaled, applying, applied) with its wall and CPU seconds and the resident memory after it; for evaluate and sign, the CPU seconds its workers spent parsing and evaluating and signing.

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

    @Option(
        help: ArgumentHelp(
            "With --push: HTTP/2 connections to APNs per pass type (see `passforge push`).", valueName: "N"))
    var pushConnections: Int?

    @Option(
        help: ArgumentHelp(
            "Start from the build state published at DEST (a folder, [user@]host:/path or s3://BUCKET/PREFIX), so a fresh clone signs only what changed.",
            valueName: "DEST"))
    var stateFrom: String?

    @Flag(
        help:
            "Allow a build with no previous state under CI=true (the first deploy): every pass is signed with a new update tag."
    )
    var initial = false

    @Flag(help: "Print the wall and CPU time of each build phase to standard error.")
    var timings = false

    func run() async throws {
        var settings = try project.settings(
            developmentSigning: developmentSigning, allowHTTP: allowHTTPWebService, jobs: jobs)
        var stateFetch: StateFetchOutcome?
        // The process's one pool for work that blocks: the state fetch, index files, SQLite commits.
        let pool = BlockingPool()
        if let stateFrom {
            let destination = try Console.runReportingErrors { try PublishDestination(parsing: stateFrom) }
            stateFetch = try Console.runReportingErrors { try destination.fetchState(into: project.output, pool: pool) }
            if !quiet, let stateFetch { Console.error(Self.describe(stateFetch, from: destination)) }
            // The bytes of unchanged passes are at DEST, not in this (fresh) output folder.
            settings.requiresLocalPassFiles = false
        }
        if let refusal = FreshBuildGuard.refusal(
            environment: settings.environment, outputDirectory: project.output,
            isInitial: initial, stateFetch: stateFetch)
        {
            Console.error("error: \(refusal)")
            throw ExitCode.failure
        }
        let quiet = self.quiet
        settings.landingPages = try Self.landingPageRenderer(settings, quiet: quiet)
        settings.recordsTimings = timings
        let report = try Console.runReportingErrors {
            try PassBuilder(settings: settings).build { event in if !quiet { Console.progress(event) } }
        }
        if timings { Console.error(([BuildPhaseTime.header] + report.phases.map(\.line)).joined(separator: "\n")) }
        if !quiet { Console.report(report.warnings) }
        for key in report.removed { Console.print("removed \(key)") }
        if report.usedDevelopmentSigning { Console.warnDevelopmentSigning() }
        // The process's one output tree: the index refresh and `--push` share its index writer.
        let output = OutputFolder(directory: project.output, pool: pool)
        try await refreshDeviceIndices(report, output: output)
        Console.print(report.summary)
        for (offer, size) in report.offerPoolSizes.sorted(by: { $0.key < $1.key }) {
            Console.print("offer \(offer): \(size) pass\(size == 1 ? "" : "es") in the pool")
        }
        if push {
            try await PushCommand.push(
                project: project, output: output, index: PublishedIndex(report.committedState),
                connections: pushConnections, quiet: quiet)
        }
        PassBuilder.releaseInBackground(report)
    }

    /// The landing pages' renderer (`landingPages:` in passforge.yml), its warnings printed once; nil when switched off.
    static func landingPageRenderer(_ settings: BuildSettings, quiet: Bool) throws -> LandingPageRenderer? {
        guard settings.configuration.landingPages.enabled else { return nil }
        let renderer: LandingPageRenderer
        do {
            renderer = try LandingPageRenderer(
                configuration: settings.configuration, templatesDirectory: settings.templatesDirectory)
        } catch {
            Console.report(error.diagnostics)
            throw ExitCode.failure
        }
        if !quiet { for warning in renderer.warnings { Console.error("warning: \(warning)") } }
        return renderer
    }

    private static func describe(_ outcome: StateFetchOutcome, from destination: PublishDestination) -> String {
        switch outcome {
        case .destinationHasNoState: "\(destination) has no build yet: a first deploy, every pass is built"
        case .fetched(let tag): "starting from the build published at \(destination) (update tag \(tag))"
        case .keptLocal(let tag):
            "the local build state (update tag \(tag)) is as new as \(destination)'s; starting from it"
        }
    }

    /// A build rewrites the indices of the devices holding the passes it
    /// changed or removed — when there is a registration store to read.
    private func refreshDeviceIndices(_ report: BuildReport, output: OutputFolder) async throws {
        guard !(report.built + report.removed).isEmpty,
            let (store, _) = try await StoreOpening.open(
                project: project.project, onlyIfPresent: true, pool: output.indexFiles.pool)
        else { return }
        do {
            let count = try await output.indexFiles.refresh(
                changed: report.built + report.removed, committed: report.committedState, store: store)
            if count > 0 && !quiet { Console.error("refreshed \(count) device index file\(count == 1 ? "" : "s")") }
        } catch {
            Console.error(
                "warning: the passes are built, but the device indices could not be refreshed (\(error)); they are refreshed on the next registration or build"
            )
        }
    }
}
