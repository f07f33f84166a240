import AtomicFiles
import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// `.pkpasses` bundles (`bundle:` in a content file) carried by `passforge
/// publish` with their bundles.json, to a folder and over rsync and ssh.
@Suite struct BundlePublishTests {
    /// A project with 2 single passes and a bundle of 3, built by the CLI.
    static func builtWithBundle() throws -> BuiltProject {
        let built = try BuiltProject(passCount: 2)
        built.writeFamily()
        try built.build()
        return built
    }

    @Test func bundlesTravelWithThePassesAndLeaveWhenTheBuildDropsThem() throws {
        let built = try Self.builtWithBundle()
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let publisher = try Publisher(outputDirectory: built.output, destination: .directory(dest.root))

        // First publish: the bundle, its list, and the downloads list that names it.
        let first = try publisher.publish()
        let bundle = try built.bundle()
        #expect(
            first.passesSent == 5 && first.bundlesSent == 1 && first.bundleBytesSent == bundle.size && first.stateSent)
        #expect(first.description.contains("bundles: 1 sent (\(bundle.size) bytes), 0 removed"), "\(first)")
        try dest.expectSameBundles(as: built)
        let csv = String(decoding: dest.bytes(".passforge/downloads.csv") ?? [], as: UTF8.self)
        #expect(csv.contains("bundle,family,\(bundle.downloadPath)\n"), "\(csv)")
        try dest.expectConsistent()

        // Nothing changed: nothing is sent.
        let before = dest.identities()
        let again = try publisher.publish()
        #expect(again.description.hasPrefix("nothing to publish"), "\(again)")
        #expect(dest.identities() == before)

        // A pass outside the bundle changed: the bundle (same ETag) stays as it was.
        try built.build(count: 2, points: { $0 == 0 ? 50 : $0 })
        let outside = try publisher.publish()
        #expect(outside.passesSent == 1 && outside.bundlesSent == 0 && outside.filesRemoved == 0)
        #expect(dest.identity(bundle.downloadPath) == before[bundle.downloadPath])
        #expect(dest.identity(BundleList.path) == before[BundleList.path])

        // A member changed: the bundle is made again and sent again, under the same name.
        built.writeFamily(points: 77)
        try built.build()
        let changed = try built.bundle()
        #expect(changed.downloadPath == bundle.downloadPath && changed.etag != bundle.etag)
        let beforeDryRun = dest.identities()
        let dryRun = try publisher.publish(dryRun: true)
        #expect(dryRun.isDryRun && dryRun.passesSent == 1 && dryRun.bundlesSent == 1 && dryRun.stateSent)
        #expect(dryRun.plannedUploads.contains(changed.downloadPath) && dryRun.plannedRemovals.isEmpty)
        #expect(
            dryRun.description.contains("would send 1 pass (3 files, ")
                && dryRun.description.contains("1 bundle (\(changed.size) bytes)"),
            "\(dryRun)")
        #expect(dest.identities() == beforeDryRun)
        let member = try publisher.publish()
        #expect(member.passesSent == 1 && member.bundlesSent == 1 && member.bundlesRemoved == 0)
        try dest.expectSameBundles(as: built)
        try dest.expectConsistent()

        // Renamed: the new one lands, the old one goes.
        built.writeFamily(bundle: "family-2026", points: 77)
        try built.build()
        let renamed = try built.bundle("family-2026")
        let rename = try publisher.publish()
        #expect(rename.bundlesSent == 1 && rename.bundlesRemoved == 1 && rename.filesRemoved == 1)
        #expect(!dest.exists(bundle.downloadPath) && dest.exists(renamed.downloadPath))
        try dest.expectSameBundles(as: built)

        // bundle: removed: the file leaves DEST; the CLI says so.
        built.writeFamily(bundle: nil, points: 77)
        try built.build()
        #expect(try built.bundles().bundles.isEmpty)
        let dryRemoval = try built.project.passforge(
            ["publish", "--dry-run", dest.root], environment: built.environment)
        #expect(dryRemoval.status == 0, "\(dryRemoval.output)")
        #expect(dryRemoval.stdout.contains("would remove \(renamed.downloadPath)\n"), "\(dryRemoval.stdout)")
        #expect(dryRemoval.stdout.contains("would remove 0 passes and 1 bundle (1 file)"), "\(dryRemoval.stdout)")
        #expect(dest.exists(renamed.downloadPath))
        let removed = try built.publishCommand(dest.root)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stderr.contains("0 bundles to send"), "\(removed.stderr)")
        #expect(removed.stdout.contains("bundles: 0 sent (0 bytes), 1 removed"), "\(removed.stdout)")
        #expect(!dest.exists(renamed.downloadPath))
        try dest.expectSameBundles(as: built)
        try dest.expectConsistent()
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))
        #expect(!dest.identities().keys.contains { $0.hasSuffix(".publishing") })
    }

    @Test func aPublishKilledBeforeItsRemovalsLeavesNoBundleBehind() throws {
        let built = try Self.builtWithBundle()
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        #expect(try built.publishCommand(dest.root).status == 0)
        let bundle = try built.bundle()

        built.writeFamily(bundle: nil)
        try built.build()
        // Killed after the lists, before the removals: the new list no longer names the file, which is still there.
        try killPublish(built, to: dest.root, at: "removing")
        #expect(dest.bytes(BundleList.path) == AtomicFileSystem.readFile("\(built.output)/\(BundleList.path)"))
        #expect(dest.exists(bundle.downloadPath))

        // The next run finds it at DEST and deletes it.
        let rerun = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        #expect(!rerun.stateSent && rerun.bundlesRemoved == 1)
        #expect(!dest.exists(bundle.downloadPath))
        try dest.expectSameBundles(as: built)
    }

    @Test func aDestinationPublishedBeforeBundlesWereCarriedGetsThem() throws {
        let built = try Self.builtWithBundle()
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let publisher = try Publisher(outputDirectory: built.output, destination: .directory(dest.root))
        _ = try publisher.publish()
        // What an older passforge left: passes and state, no bundles.json and no bundle.
        let bundle = try built.bundle()
        try AtomicFileSystem.remove("\(dest.root)/\(BundleList.path)")
        try AtomicFileSystem.remove("\(dest.root)/\(bundle.downloadPath)")

        let update = try publisher.publish()
        #expect(update.passesSent == 0 && update.bundlesSent == 1 && update.stateSent)
        try dest.expectSameBundles(as: built)
    }

    /// An output tree that never had bundles (no bundles.json) published
    /// over one that had: the bundles go, and then their list.
    @Test func aBuildWithoutBundleListClearsTheDestinationsBundles() throws {
        let withBundle = try Self.builtWithBundle()
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        _ = try Publisher(outputDirectory: withBundle.output, destination: .directory(dest.root)).publish()
        let bundle = try withBundle.bundle()

        // The other output's build must be the newer one: its update tag comes from the clock, and the first
        // build's tag may have moved on to the next whole second (see PassBuilder), so wait until the clock has passed it.
        let firstTag = try BuildState.load(from: withBundle.output).lastUpdateTag
        while Int64(Date().timeIntervalSince1970 * 1000) <= firstTag { Thread.sleep(forTimeInterval: 0.05) }
        let plain = try BuiltProject(passCount: 2)
        #expect(!FileManager.default.fileExists(atPath: "\(plain.output)/\(BundleList.path)"))
        let publish = try Publisher(outputDirectory: plain.output, destination: .directory(dest.root)).publish()
        #expect(publish.bundlesRemoved == 1, "\(publish)")
        #expect(!dest.exists(bundle.downloadPath) && !dest.exists(BundleList.path))
        try dest.expectConsistent()
        #expect(
            try Publisher(outputDirectory: plain.output, destination: .directory(dest.root)).publish().description
                .hasPrefix("nothing to publish"))
    }

    /// CI: a fresh output built from the published state keeps the bundles
    /// (their members' files are only at DEST), so its publish leaves them.
    @Test func aBuildFromThePublishedStateKeepsTheBundles() throws {
        let built = try Self.builtWithBundle()
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        _ = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        let bundle = try built.bundle()

        let clone = built.project.directory.file("clone-output")
        let result = try built.project.passforge(
            ["build", "--state-from", dest.root, "--output", clone], environment: built.environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(AtomicFileSystem.readFile("\(clone)/\(BundleList.path)") == dest.bytes(BundleList.path))

        let before = dest.identities()
        let publish = try Publisher(outputDirectory: clone, destination: .directory(dest.root)).publish()
        #expect(publish.bundlesSent == 0 && publish.bundlesRemoved == 0 && publish.filesRemoved == 0, "\(publish)")
        #expect(dest.identity(bundle.downloadPath) == before[bundle.downloadPath])
        #expect(dest.bytes(BundleList.path) == AtomicFileSystem.readFile("\(built.output)/\(BundleList.path)"))
    }

    @Test func bundlePathsAreBuildOwnedAndNothingElse() {
        #expect(TreePath.isBuildOwned("download/Ab-_0123456789abcdefghij.pkpasses"))
        for path in [
            "download/../x.pkpasses", "download/.hidden.pkpasses", "download/a/b.pkpasses", ".pkpasses",
            "download/.pkpasses", "v1/devices/x.pkpasses", "../download/a.pkpasses", "download/a b.pkpasses",
            ".passforge/bundles.json", "download/a.pkpasses.publishing",
        ] {
            #expect(!TreePath.isBuildOwned(path), "\(path)")
        }
    }
}
