import AtomicFiles
import Foundation
import PassBuild

/// `passforge publish DEST`: carries the build-owned part of the output tree
/// (passes, token links, downloads, build state) to a destination, in an
/// order that keeps the destination serveable at every moment:
///
/// 1. the files of new and changed passes, each landing whole;
/// 2. the build state, which lists only files that are now in place;
/// 3. the files of removed passes.
///
/// Only passes whose record differs from the destination's are sent. The
/// destination's `v1/devices/` (written by the server there) is never
/// touched. A publish killed at any point leaves the destination serving the
/// previous build or the new one, and running it again completes it.
package struct Publisher: Sendable {
    package var outputDirectory: String
    package var destination: PublishDestination
    let transport: any PublishTransport
    let environment: [String: String]

    package init(outputDirectory: String, destination: PublishDestination,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.init(outputDirectory: outputDirectory, destination: destination,
                  transport: try destination.makeTransport(environment: environment), environment: environment)
    }

    /// A publish through a given transport (tests use one that fails half-way).
    package init(outputDirectory: String, destination: PublishDestination, transport: any PublishTransport,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.outputDirectory = outputDirectory
        self.destination = destination
        self.transport = transport
        self.environment = environment
    }

    package func publish(progress: @Sendable (PublishProgress) -> Void = { _ in }) throws -> PublishSummary {
        let output = LocalOutput(directory: outputDirectory)
        guard FileManager.default.fileExists(atPath: output.stateDirectory) else {
            throw PublishError("\(outputDirectory) holds no build (no .passforge/); run passforge build first")
        }
        if case .directory(let path) = destination,
           URL(fileURLWithPath: path).resolvingSymlinksInPath().path == URL(fileURLWithPath: outputDirectory).resolvingSymlinksInPath().path {
            throw PublishError("\(path) is the output tree itself; publish to another folder")
        }
        let lock = try output.lock(purpose: "publish")
        defer { lock.release() }
        guard let localBytes = AtomicFileSystem.readFile(BuildState.path(in: outputDirectory)) else {
            throw PublishError("\(outputDirectory) holds no build (no .passforge/state.json); run passforge build first")
        }
        let local = try BuildState.load(from: outputDirectory)

        var published: (state: BuildState, bytes: [UInt8], downloadsCSV: [UInt8]?)?
        switch try transport.fetchState() {
        case .missingFolder:
            try transport.createDestination()
        case .noState:
            break
        case .published(let bytes, let csv):
            published = (try output.decodeState(bytes, from: destination), bytes, csv)
        }
        if let published, published.state.lastUpdateTag > local.lastUpdateTag {
            throw PublishError("\(destination) holds a newer build (update tag \(published.state.lastUpdateTag)) than \(outputDirectory) (\(local.lastUpdateTag)); build with --state-from \(destination) first, so that no pass goes back to an older version")
        }
        let destinationLock = try transport.lockDestination()
        defer { destinationLock?.release() }

        let plan = try PublishPlan(local: local, destination: published?.state)
        try verifyLocalFiles(of: plan, local: local)
        var summary = PublishSummary()
        summary.lastUpdateTag = local.lastUpdateTag
        summary.passesSent = plan.uploads.count
        summary.filesSent = plan.fileCount
        summary.bytesSent = plan.byteCount
        summary.passesRemoved = plan.removedPasses
        summary.filesRemoved = plan.removals.count
        progress(.planned(passes: plan.uploads.count, files: plan.fileCount, removals: plan.removals.count))

        let total = plan.fileCount
        try transport.upload(plan.uploads, from: outputDirectory) { done in progress(.uploading(done: done, total: total)) }
        stall(at: "uploaded")

        let localCSV = AtomicFileSystem.readFile("\(outputDirectory)/.passforge/downloads.csv")
        if published?.bytes != localBytes || published?.downloadsCSV != localCSV {
            progress(.sendingState)
            try transport.uploadState(from: outputDirectory)
            summary.stateSent = true
        }
        stall(at: "removing")

        if !plan.removals.isEmpty {
            progress(.removing(files: plan.removals.count))
            try transport.remove(plan.removals, emptyFolders: plan.foldersToPrune)
        }
        return summary
    }

    /// Every pass file to send must be here and be the one the state
    /// describes: a tree that does not match its state is not published.
    private func verifyLocalFiles(of plan: PublishPlan, local: BuildState) throws {
        let etags = Dictionary(local.passes.values.map { ($0.path, $0.etag) }, uniquingKeysWith: { first, _ in first })
        for upload in plan.uploads {
            let path = "\(outputDirectory)/\(upload.passPath)"
            guard let bytes = AtomicFileSystem.readFile(path) else {
                throw PublishError("\(path) is missing, but the build state lists it as changed; run passforge build, then publish")
            }
            guard BuildState.etag(of: bytes) == etags[upload.passPath] else {
                throw PublishError("\(path) does not match the build state (another ETag); run passforge build, then publish")
            }
        }
    }

    /// Lets a test stop the publish at a named point and kill it there
    /// (PASSFORGE_TEST_STALL=uploaded|removing). Unset in real use.
    private func stall(at point: String) {
        guard environment["PASSFORGE_TEST_STALL"] == point else { return }
        FileHandle.standardError.write(Data("stalled at \(point)\n".utf8))
        while true { sleep(60) }
    }
}
