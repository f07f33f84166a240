import AtomicFiles
import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// `passforge publish` to a local folder, over trees built by the real CLI.
@Suite struct DirectoryPublishTests {
    @Test func firstPublishCopiesEverythingThenOnlyWhatChanged() throws {
        let built = try BuiltProject(passCount: 4)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let publisher = try Publisher(outputDirectory: built.output, destination: .directory(dest.root))

        // First publish: every pass, under every name, and the state.
        let first = try publisher.publish()
        let state = try built.state()
        #expect(first.passesSent == 4)
        #expect(first.filesSent == state.passes.values.reduce(0) { $0 + PassFiles($1).allPaths.count })
        #expect(first.bytesSent == state.passes.values.reduce(0) { $0 + $1.size })
        #expect(first.stateSent && first.passesRemoved == 0)
        #expect(first.lastUpdateTag == state.lastUpdateTag)
        #expect(dest.bytes(".passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        #expect(
            dest.bytes(".passforge/downloads.csv")
                == AtomicFileSystem.readFile("\(built.output)/.passforge/downloads.csv"))
        for record in state.passes.values {
            let tokenPath = try #require(record.tokenPath)
            #expect(dest.identity(tokenPath)?.inode == dest.identity(record.path)?.inode)
            dest.expectSame(as: built.output, record: record)
        }
        try dest.expectConsistent()
        // Nothing local-only travels: no journal, staging, lock or secret.
        let landing = try built.landingPages().allFiles.map(\.path) + [LandingPageList.path]
        #expect(
            Set(dest.identities().keys).isSubset(
                of: Set(
                    state.passes.values.flatMap { PassFiles($0).allPaths } + landing
                        + [".passforge/state.json", ".passforge/downloads.csv"])))

        // The server at DEST writes index files; publishing never touches them.
        let index = try dest.writeDeviceIndex()
        let indexIdentity = dest.identity(index)

        // Nothing changed: nothing is sent, not even the state.
        let before = dest.identities()
        let again = try publisher.publish()
        #expect(again.filesSent == 0 && !again.stateSent && again.filesRemoved == 0)
        #expect(again.description.hasPrefix("nothing to publish"))
        #expect(dest.identities() == before)

        // One pass changed: exactly its files are sent, every other file stays as it was.
        try built.build(count: 4, points: { $0 == 2 ? 999 : $0 })
        let changed = try built.record("C-0002")
        let second = try publisher.publish()
        #expect(second.passesSent == 1)
        #expect(second.filesSent == PassFiles(changed).allPaths.count)
        #expect(second.bytesSent == changed.size)
        #expect(second.stateSent && second.filesRemoved == 0)
        dest.expectSame(as: built.output, record: changed)
        let after = dest.identities()
        let changedPage = try built.landingPage("C-0002").files.map(\.path)
        for (path, identity) in before
        where !PassFiles(changed).allPaths.contains(path) && !path.hasPrefix(".passforge/")
            && !changedPage.contains(path)
        {
            #expect(after[path] == identity, "\(path) was rewritten")
        }
        #expect(dest.identity(index) == indexIdentity)
        try dest.expectConsistent()

        // A pass removed from content: its files leave DEST, after the state that no longer lists it.
        let gone = try built.record("C-0003")
        try built.build(count: 3, points: { $0 == 2 ? 999 : $0 })
        let third = try publisher.publish()
        #expect(third.passesRemoved == 1 && third.passesSent == 0)
        for path in PassFiles(gone).allPaths { #expect(!dest.exists(path), "\(path)") }
        #expect(try dest.state().passes[gone.key] == nil)
        #expect(dest.identity(index) == indexIdentity)
        try dest.expectConsistent()
    }

    @Test func aPublishThatFailsHalfWayLeavesThePreviousBuildAndTheNextCompletesIt() throws {
        let built = try BuiltProject(passCount: 4)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        _ = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        let previousState = dest.bytes(".passforge/state.json")
        let index = try dest.writeDeviceIndex()
        let indexBytes = dest.bytes(index)

        // Two passes change and one is removed; the connection drops after the first pass.
        let removed = try built.record("C-0003")
        try built.build(count: 3, points: { $0 == 0 ? 0 : $0 + 500 })
        let failing = FailingTransport(inner: DirectoryTransport(root: dest.root), passes: 1)
        #expect(throws: HarnessFailure.self) {
            try Publisher(outputDirectory: built.output, destination: .directory(dest.root), transport: failing)
                .publish()
        }
        #expect(dest.bytes(".passforge/state.json") == previousState)
        try dest.expectConsistent(newer: try built.state())
        for path in PassFiles(removed).allPaths { #expect(dest.exists(path), "removed before the state: \(path)") }

        // The next publish sends the rest, the state, then removes.
        let rerun = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        #expect(rerun.passesSent == 2 && rerun.passesRemoved == 1)
        #expect(dest.bytes(".passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        try dest.expectConsistent()
        for record in try built.state().passes.values { dest.expectSame(as: built.output, record: record) }
        for path in PassFiles(removed).allPaths { #expect(!dest.exists(path), "\(path)") }
        #expect(dest.bytes(index) == indexBytes)
        // No hidden temporary file is left behind.
        #expect(!dest.identities().keys.contains { $0.hasSuffix(".publishing") })
    }

    @Test func aKilledPublishIsCompletedByTheNextOne() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let published = try built.publishCommand(dest.root)
        #expect(published.status == 0, "\(published.output)")
        #expect(published.stdout.contains("published 3 passes"), "\(published.stdout)")
        let previousState = dest.bytes(".passforge/state.json")

        let removed = try built.record("C-0002")
        try built.build(count: 2, points: { $0 + 100 })
        let changed = try built.record("C-0001")

        // Killed after the files landed, before the state: DEST still serves the previous build.
        try killPublish(built, to: dest.root, at: "uploaded")
        #expect(dest.bytes(".passforge/state.json") == previousState)
        #expect(dest.bytes(changed.path) == AtomicFileSystem.readFile("\(built.output)/\(changed.path)"))
        try dest.expectConsistent(newer: try built.state())

        // Killed after the state, before the removals: DEST serves the new build; the removed files are left over.
        try killPublish(built, to: dest.root, at: "removing")
        #expect(dest.bytes(".passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        #expect(dest.exists(removed.path))
        try dest.expectConsistent()

        // The next run finds nothing to send, and still deletes the removed pass.
        let rerun = try built.publishCommand(dest.root)
        #expect(rerun.status == 0, "\(rerun.output)")
        let removedRecord = try #require(try built.state().removedPasses[removed.key])
        for path in PassFiles.paths(of: removedRecord) { #expect(!dest.exists(path), "\(path)") }
        try dest.expectConsistent()
    }

    @Test func aDamagedDestinationStateCannotReachOutsideTheTree() throws {
        let built = try BuiltProject(passCount: 1)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        _ = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        let index = try dest.writeDeviceIndex("victim")

        // DEST's state lists a "pass" whose download path points at an index file.
        var state = try dest.state()
        var bogus = try #require(state.passes.values.first)
        bogus.identifier = "OTHER"
        bogus.downloadPath = "../v1/devices/victim/registrations/\(TestPKI.passType)"
        state.passes[bogus.key] = bogus
        try AtomicFileSystem.write(try state.encoded(), to: BuildState.path(in: dest.root))

        let error = #expect(throws: PublishError.self) {
            try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        }
        // Refused as the state is read, before any plan is made.
        #expect(
            error?.description.contains("the build state at \(dest.root) is refused") == true,
            "\(String(describing: error))")
        #expect(
            error?.description.contains("which is not download/<capability>.pkpass") == true,
            "\(String(describing: error))")
        #expect(dest.exists(index))
    }

    @Test func anOlderBuildDoesNotReplaceANewerOne() throws {
        let older = try BuiltProject(passCount: 1)
        let newer = try BuiltProject(passCount: 2)
        let folder = TemporaryDirectory("passforge-dest")
        _ = try Publisher(outputDirectory: newer.output, destination: .directory(folder.path)).publish()
        let result = try older.publishCommand(folder.path)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("holds a newer build") && result.stderr.contains("--state-from"), "\(result.stderr)")
    }

    @Test func publishingWithoutABuildSaysWhatToDo() throws {
        let project = ProjectFixture(passCount: 1)
        let folder = TemporaryDirectory("passforge-dest")
        let result = try project.passforge(["publish", folder.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("run passforge build first"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.output))
    }
}
