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
}
