import AtomicFiles
import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// `passforge publish user@host:/path` and `--state-from` over rsync and ssh,
/// to a real sshd on a loopback port (its files land on this machine, so the
/// tests look at them directly).
@Suite(.serialized) struct SSHPublishTests {
    @Test func publishOverSSHSendsOnlyWhatChanged() throws {
        let server = try SSHServer()
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-remote")
        let dest = DestinationTree(root: folder.file("site"))
        let environment = ProcessInfo.processInfo.environment.merging(["PASSFORGE_SSH_COMMAND": server.sshCommand]) {
            $1
        }
        let destination = try PublishDestination(parsing: "\(server.userHost):\(dest.root)")
        let publisher = try Publisher(outputDirectory: built.output, destination: destination, environment: environment)

        let first = try publisher.publish()
        let state = try built.state()
        #expect(first.passesSent == 3 && first.stateSent)
        #expect(first.filesSent == state.passes.values.reduce(0) { $0 + PassFiles($1).allPaths.count })
        #expect(dest.bytes(".passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        #expect(
            dest.bytes(".passforge/downloads.csv")
                == AtomicFileSystem.readFile("\(built.output)/.passforge/downloads.csv"))
        for record in state.passes.values { dest.expectSame(as: built.output, record: record) }
        try dest.expectConsistent()
        let index = try dest.writeDeviceIndex()
        let indexIdentity = dest.identity(index)

        let before = dest.identities()
        let again = try publisher.publish()
        #expect(again.filesSent == 0 && !again.stateSent)
        #expect(dest.identities() == before)

        // One change: that pass's files only; its existing links are replaced, still one file with it.
        try built.build(count: 3, points: { $0 == 1 ? 42 : $0 })
        let changed = try built.record("C-0001")
        let second = try publisher.publish()
        #expect(second.passesSent == 1 && second.filesSent == PassFiles(changed).allPaths.count)
        dest.expectSame(as: built.output, record: changed)
        let after = dest.identities()
        let changedPage = try built.landingPage("C-0001").files.map(\.path)
        for (path, identity) in before
        where !PassFiles(changed).allPaths.contains(path) && !path.hasPrefix(".passforge/")
            && !changedPage.contains(path)
        {
            #expect(after[path] == identity, "\(path) was rewritten")
        }
        try dest.expectConsistent()

        // A removal, through the CLI this time.
        let gone = try built.record("C-0002")
        try built.build(count: 2, points: { $0 == 1 ? 42 : $0 })
        let result = try built.publishCommand(
            destination.description, environment: ["PASSFORGE_SSH_COMMAND": server.sshCommand])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("removed 1"), "\(result.stdout)")
        for path in PassFiles(gone).allPaths { #expect(!dest.exists(path), "\(path)") }
        #expect(dest.identity(index) == indexIdentity)
        try dest.expectConsistent()
        #expect(!dest.identities().keys.contains { $0.hasSuffix(".publishing") })
    }

    @Test func aKilledPublishOverSSHIsCompletedByTheNextOne() throws {
        let server = try SSHServer()
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-remote")
        let dest = DestinationTree(root: folder.file("site"))
        let target = "\(server.userHost):\(dest.root)"
        let ssh = ["PASSFORGE_SSH_COMMAND": server.sshCommand]
        #expect(try built.publishCommand(target, environment: ssh).status == 0)
        let previousState = dest.bytes(".passforge/state.json")

        try built.build(count: 3, points: { $0 + 10 })
        try killPublish(built, to: target, at: "uploaded", environment: ssh)
        #expect(dest.bytes(".passforge/state.json") == previousState)
        try dest.expectConsistent(newer: try built.state())

        let rerun = try built.publishCommand(target, environment: ssh)
        #expect(rerun.status == 0, "\(rerun.output)")
        #expect(dest.bytes(".passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        for record in try built.state().passes.values { dest.expectSame(as: built.output, record: record) }
        try dest.expectConsistent()
    }

    @Test func stateFromOverSSH() throws {
        let server = try SSHServer()
        let environment = ProcessInfo.processInfo.environment.merging(["PASSFORGE_SSH_COMMAND": server.sshCommand]) {
            $1
        }
        let folder = TemporaryDirectory("passforge-remote")
        let clone = TemporaryDirectory("passforge-clone")
        let output = clone.file("output")
        let destination = try PublishDestination(parsing: "\(server.userHost):\(folder.file("site"))")

        let missing = #expect(throws: PublishError.self) {
            try destination.fetchState(into: output, environment: environment)
        }
        #expect(missing?.description.contains("does not exist") == true, "\(String(describing: missing))")

        try FileManager.default.createDirectory(atPath: folder.file("site"), withIntermediateDirectories: true)
        #expect(try destination.fetchState(into: output, environment: environment) == .destinationHasNoState)

        let built = try BuiltProject(passCount: 2)
        _ = try Publisher(outputDirectory: built.output, destination: destination, environment: environment).publish()
        let outcome = try destination.fetchState(into: output, environment: environment)
        #expect(outcome == .fetched(lastUpdateTag: try built.state().lastUpdateTag))
        #expect(
            clone.read("output/.passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
        #expect(
            clone.read("output/.passforge/downloads.csv")
                == AtomicFileSystem.readFile("\(built.output)/.passforge/downloads.csv"))
    }

    @Test func bundlesOverSSH() throws {
        let server = try SSHServer()
        let built = try BundlePublishTests.builtWithBundle()
        let folder = TemporaryDirectory("passforge-remote")
        let dest = DestinationTree(root: folder.file("site"))
        let environment = ProcessInfo.processInfo.environment.merging(["PASSFORGE_SSH_COMMAND": server.sshCommand]) {
            $1
        }
        let destination = try PublishDestination(parsing: "\(server.userHost):\(dest.root)")
        let publisher = try Publisher(outputDirectory: built.output, destination: destination, environment: environment)

        let first = try publisher.publish()
        let bundle = try built.bundle()
        #expect(first.bundlesSent == 1 && first.stateSent)
        try dest.expectSameBundles(as: built)
        let before = dest.identities()
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))
        #expect(dest.identities() == before)

        // A member changed: the bundle is sent again.
        built.writeFamily(points: 99)
        try built.build()
        let member = try publisher.publish()
        #expect(member.passesSent == 1 && member.bundlesSent == 1)
        try dest.expectSameBundles(as: built)

        // --state-from brings the bundle list along.
        let clone = TemporaryDirectory("passforge-clone")
        _ = try destination.fetchState(into: clone.file("output"), environment: environment)
        #expect(clone.read("output/\(BundleList.path)") == dest.bytes(BundleList.path))

        // bundle: removed. A bundle file no list names (left by a killed publish) goes too.
        let leftover = "download/AAAAAAAAAAAAAAAAAAAAAA.pkpasses"
        try AtomicFileSystem.write(Array("old bundle".utf8), to: "\(dest.root)/\(leftover)")
        built.writeFamily(bundle: nil, points: 99)
        try built.build()
        let removed = try publisher.publish()
        #expect(removed.bundlesRemoved == 2 && removed.stateSent)
        #expect(!dest.exists(bundle.downloadPath) && !dest.exists(leftover))
        try dest.expectSameBundles(as: built)
        try dest.expectConsistent()
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))
    }

    @Test func failuresSayWhatToDo() throws {
        let server = try SSHServer()
        let built = try BuiltProject(passCount: 1)
        let folder = TemporaryDirectory("passforge-remote")
        let target = "\(server.userHost):\(folder.path)"

        // No sshd on that port.
        let closed = try Loopback.freePort()
        let unreachable = try built.publishCommand(
            target,
            environment: [
                "PASSFORGE_SSH_COMMAND": server.sshCommand.replacingOccurrences(
                    of: "-p \(server.port)", with: "-p \(closed)")
            ])
        #expect(unreachable.status == 1)
        #expect(
            unreachable.stderr.contains("unreachable") && unreachable.stderr.contains("port"), "\(unreachable.stderr)")

        // A key the server does not know.
        let stranger = folder.file("stranger_key")
        try runProcess("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", stranger])
        let denied = try built.publishCommand(
            target,
            environment: [
                "PASSFORGE_SSH_COMMAND": server.sshCommand.replacingOccurrences(of: server.clientKey, with: stranger)
            ])
        #expect(denied.status == 1)
        #expect(
            denied.stderr.contains("could not log in") && denied.stderr.contains("PASSFORGE_SSH_COMMAND"),
            "\(denied.stderr)")

        // A destination under a file: the folder cannot be made.
        folder.write("a-file", "not a folder")
        let blocked = "\(server.userHost):\(folder.file("a-file"))/site"
        let refused = try built.publishCommand(blocked, environment: ["PASSFORGE_SSH_COMMAND": server.sshCommand])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("publish to \(blocked) failed: cannot create \(blocked)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Not a directory"), "\(refused.stderr)")
    }
}
