import AtomicFiles
import Foundation
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// What a publish to a folder killed inside one step leaves, and that the next complete publish leaves the
/// destination holding exactly the build's files.
@Suite struct PublishKillWindowTests {
    /// The served names of a tree (every regular file outside `.passforge/` whose name does not start with a
    /// dot: hosts serve no dotfile) with their bytes.
    static func servedFiles(_ root: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let parts = relative.split(separator: "/")
            guard !parts.contains(where: { $0.hasPrefix(".") }) else { continue }
            guard FileStamp(path: "\(root)/\(relative)")?.isRegularFile == true else { continue }
            files[relative] = AtomicFileSystem.readFile("\(root)/\(relative)")
        }
        return files
    }

    @Test func replacingALinkLeavesOnlyItsStagedDotname() throws {
        let folder = TemporaryDirectory("passforge-link")
        let (old, new, link) = (folder.file("old"), folder.file("new"), folder.file("name"))
        try AtomicFileSystem.write(Array("old".utf8), to: old)
        try AtomicFileSystem.write(Array("new".utf8), to: new)
        try AtomicFileSystem.hardLink(old, as: link)
        // What a run killed between its link and its rename left: the staged name, linking the new file.
        try AtomicFileSystem.hardLink(new, as: DirectoryTransport.stagedPath(for: link))

        try DirectoryTransport.link(new, as: link)
        #expect(AtomicFileSystem.readFile(link) == Array("new".utf8))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["name", "new", "old"], "no name besides the link and its files: \(names)")
    }

    /// The 1-in-9 outside runs: a publish killed between linking a changed pass's token name (or download)
    /// under a temporary name and renaming it over the old one left `NAME.tmp-<pid>-<n>`, served, which no
    /// later publish knew of. Today a kill there leaves the staged dotname, which the next publish replaces.
    @Test func theNextPublishAfterAKillInsideALinkHoldsExactlyTheBuild() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let first = try built.publishCommand(dest.root)
        #expect(first.status == 0, "\(first.output)")

        try built.build(count: 3, points: { $0 + 100 })
        // Killed after the pass files were renamed into place, inside the link of each of their other names.
        for record in try built.state().passes.values {
            let files = PassFiles(record)
            for name in files.linkPaths {
                let staged = DirectoryTransport.stagedPath(for: "\(dest.root)/\(name)")
                try AtomicFileSystem.hardLink("\(built.output)/\(files.passPath)", as: staged)
            }
        }

        let rerun = try built.publishCommand(dest.root)
        #expect(rerun.status == 0, "\(rerun.output)")
        try dest.expectConsistent()
        #expect(Self.servedFiles(dest.root) == Self.servedFiles(built.output))
        #expect(!dest.identities().keys.contains { $0.hasSuffix(".publishing") || $0.contains(".tmp-") })
    }

    /// Killed after its state, before its removals: the new state no longer names what a changed pass dropped,
    /// nor a removed pass without a token, so the next publish takes them from the note written before the state.
    @Test func removalsNotedBeforeTheStateAreDeletedByTheNextPublish() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        #expect(try built.publishCommand(dest.root).status == 0)
        let removed = try built.record("C-0002")
        try built.build(count: 2)

        try killPublish(built, to: dest.root, at: PublishCheckpoint.removing)
        let note = try #require(dest.bytes(DirectoryTransport.removalsNotePath))
        let noted = try JSONDecoder().decode([String].self, from: Data(note))
        #expect(Set(PassFiles(removed).allPaths).isSubset(of: noted), "\(noted)")

        // The plan takes a note's build-owned names the build no longer uses, and nothing else.
        let state = PublishedIndex(try built.state())
        let kept = try built.record("C-0001").path
        let plan = try PublishPlan(
            local: state, destination: state, notedRemovals: [removed.path, kept, ".passforge/state.json", "../x"])
        #expect(plan.removals.contains(removed.path))
        #expect(!plan.removals.contains { $0 == kept || !TreePath.isBuildOwned($0) }, "\(plan.removals)")

        let rerun = try built.publishCommand(dest.root)
        #expect(rerun.status == 0, "\(rerun.output)")
        #expect(!dest.exists(DirectoryTransport.removalsNotePath))
        #expect(Self.servedFiles(dest.root) == Self.servedFiles(built.output))
    }

    /// A device during a publish: it lists its serials (the destination's state, and its index as the server
    /// there wrote it for the previous build), then fetches each pass. Paused at each checkpoint, every serial
    /// it is given has its pass there, whole (the previous version or the new one).
    @Test func aDeviceReadingDuringAPublishGetsEveryPassItIsTold() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        #expect(try built.publishCommand(dest.root).status == 0)
        let index = "v1/devices/1a2b3c4d5e6f/registrations/\(TestPKI.passType)"
        try AtomicFileSystem.write(
            Array(#"{"serialNumbers":["C-0000","C-0001","C-0002"],"lastUpdated":"1"}"#.utf8),
            to: "\(dest.root)/\(index)")
        let previous = try dest.state()
        let template = folder.file("previous")
        #expect(try runProcess("/bin/cp", ["-a", dest.root, template]).status == 0)
        try built.build(count: 2, points: { $0 + 100 })
        let next = try built.state()

        var seen: [String] = []
        for point in [PublishCheckpoint.uploaded, PublishCheckpoint.removing] {
            let reader = StopAt(point) {
                let state = try dest.state()
                let listed = try JSONDecoder().decode(SerialList.self, from: Data(dest.bytes(index) ?? []))
                let serials = Set(state.passes.values.map(\.identifier) + listed.serialNumbers)
                for serial in serials {
                    let key = "\(TestPKI.passType)/\(serial)"
                    let record = try #require(state.passes[key] ?? previous.passes[key])
                    let bytes = try #require(
                        dest.bytes(record.path), "\(point): \(serial) is listed, its pass is missing")
                    let etags = [previous.passes[key]?.etag, next.passes[key]?.etag].compactMap { $0 }
                    #expect(etags.contains(BuildState.etag(of: bytes)), "\(point): \(serial) is not whole")
                }
                seen.append(point)
            }
            // Each checkpoint on a destination as the previous build left it.
            try? FileManager.default.removeItem(atPath: dest.root)
            #expect(try runProcess("/bin/cp", ["-a", template, dest.root]).status == 0)
            _ = try Publisher(outputDirectory: built.output, destination: .directory(dest.root), checkpoints: reader)
                .publish()
            try reader.result()
        }
        #expect(seen == [PublishCheckpoint.uploaded, PublishCheckpoint.removing])
    }

    /// Apple "Get the List of Updatable Passes": the device's serials.
    struct SerialList: Decodable { var serialNumbers: [String] }
}
