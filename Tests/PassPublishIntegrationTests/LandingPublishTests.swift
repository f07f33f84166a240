import AtomicFiles
import Foundation
import ObjectStorage
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

extension BuiltProject {
    /// The landing pages of the last build (`.passforge/landing-pages.txt`).
    func landingPages() throws -> LandingPageList {
        let bytes = try #require(
            AtomicFileSystem.readFile("\(output)/\(LandingPageList.path)"), "the build wrote no landing pages")
        return try #require(LandingPageList(decoding: bytes))
    }

    /// The landing page record of pass `serial`.
    func landingPage(_ serial: String) throws -> LandingPageRecord {
        try #require(try landingPages().pages["\(TestPKI.passType)/\(serial)"], "no landing page for \(serial)")
    }
}

extension DestinationTree {
    /// Every file of the local landing list is at the destination with the local bytes, and so is the list.
    func expectSameLandingPages(as built: BuiltProject, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let list = try built.landingPages()
        #expect(!list.pages.isEmpty, sourceLocation: sourceLocation)
        for file in list.allFiles {
            #expect(bytes(file.path).map(digest) == file.etag, "\(file.path)", sourceLocation: sourceLocation)
        }
        #expect(bytes(LandingPageList.path) == list.encoded, sourceLocation: sourceLocation)
    }
}

/// `passforge publish` carries the landing pages (`download/<capability>.html`, their logos, the badges) and
/// `landing-pages.txt` like the items: only what changed, after the downloads they link, the list before the
/// state, and the files of removed pages after it — to a folder, over rsync and ssh, and to a bucket.
@Suite struct LandingPublishTests {
    @Test func aFolderGetsThePagesAndOnlyTheChangedOnesAfterwards() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let publisher = try Publisher(outputDirectory: built.output, destination: .directory(dest.root))

        let first = try publisher.publish()
        let list = try built.landingPages()
        #expect(first.landingFilesSent == list.allFiles.count && first.landingFilesRemoved == 0, "\(first)")
        #expect(first.description.contains("landing pages: \(list.allFiles.count) files sent"), "\(first)")
        try dest.expectSameLandingPages(as: built)
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))

        // One pass changed: its page (and nothing else of the pages) is sent again.
        let before = dest.identities()
        let oldPage = try built.landingPage("C-0001")
        try built.build(count: 3, points: { $0 == 1 ? 99 : $0 })
        let newPage = try built.landingPage("C-0001")
        let changedFiles = newPage.files.filter { !oldPage.files.contains($0) }
        #expect(!changedFiles.isEmpty)
        let plan = try publisher.publish(dryRun: true)
        #expect(plan.landingFilesSent == changedFiles.count, "\(plan)")
        #expect(plan.description.contains("landing pages: \(changedFiles.count) file"), "\(plan)")
        let pagePath = try #require(newPage.pagePath)
        let downloadPath = try built.record("C-0001").downloadPath
        let pageIndex = try #require(plan.plannedUploads.firstIndex(of: pagePath))
        let downloadIndex = try #require(plan.plannedUploads.firstIndex(of: downloadPath))
        #expect(downloadIndex < pageIndex, "a page lands after the download it links")
        let second = try publisher.publish()
        #expect(second.passesSent == 1 && second.landingFilesSent == changedFiles.count, "\(second)")
        try dest.expectSameLandingPages(as: built)
        let after = dest.identities()
        for file in try built.landingPages().allFiles where !changedFiles.contains(file) {
            #expect(after[file.path] == before[file.path], "\(file.path) was sent again")
        }

        // A pass removed: its page files go, after the state.
        let gone = try built.landingPage("C-0002")
        try built.build(count: 2, points: { $0 == 1 ? 99 : $0 })
        let third = try publisher.publish()
        #expect(third.landingFilesRemoved == gone.files.count && third.passesRemoved == 1, "\(third)")
        for file in gone.files { #expect(!dest.exists(file.path), "\(file.path) is still there") }
        try dest.expectSameLandingPages(as: built)
        try dest.expectConsistent()
    }

    @Test func aPublishKilledBeforeItsRemovalsLeavesNoPageBehind() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        #expect(try built.publishCommand(dest.root).status == 0)
        let gone = try built.landingPage("C-0002")

        try built.build(count: 2)
        try killPublish(built, to: dest.root, at: "removing")
        // The new list (without the page) is there; the page's files too.
        #expect(dest.bytes(LandingPageList.path) == (try built.landingPages()).encoded)
        for file in gone.files { #expect(dest.exists(file.path), "\(file.path)") }

        let rerun = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()
        #expect(rerun.landingFilesRemoved == gone.files.count, "\(rerun)")
        for file in gone.files { #expect(!dest.exists(file.path), "\(file.path) is still there") }
        try dest.expectSameLandingPages(as: built)
    }

    @Test func pagesSwitchedOffLeaveTheDestinationWithTheirList() throws {
        let built = try BuiltProject(passCount: 2)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        let publisher = try Publisher(outputDirectory: built.output, destination: .directory(dest.root))
        _ = try publisher.publish()
        let files = try built.landingPages().allFiles

        let yml = try #require(AtomicFileSystem.readFile(built.project.directory.file("passforge.yml")))
        built.project.directory.write(
            "passforge.yml", String(decoding: yml, as: UTF8.self) + "\nlandingPages:\n  enabled: false\n")
        try built.build()
        #expect(AtomicFileSystem.readFile("\(built.output)/\(LandingPageList.path)") == nil)
        let off = try publisher.publish()
        #expect(off.landingFilesRemoved == files.count, "\(off)")
        for file in files { #expect(!dest.exists(file.path), "\(file.path)") }
        #expect(!dest.exists(LandingPageList.path))
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))
    }

    /// CI: a fresh output built from the published state keeps the pages of the unchanged items (their files are
    /// only at DEST), so its publish neither sends nor deletes them.
    @Test func aBuildFromThePublishedStateKeepsThePages() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = DestinationTree(root: folder.file("site"))
        _ = try Publisher(outputDirectory: built.output, destination: .directory(dest.root)).publish()

        let clone = built.project.directory.file("clone-output")
        let result = try built.project.passforge(
            ["build", "--state-from", dest.root, "--output", clone],
            environment: built.environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(AtomicFileSystem.readFile("\(clone)/\(LandingPageList.path)") == dest.bytes(LandingPageList.path))
        let before = dest.identities()
        let publish = try Publisher(outputDirectory: clone, destination: .directory(dest.root)).publish()
        #expect(publish.landingFilesSent == 0 && publish.landingFilesRemoved == 0, "\(publish)")
        for file in try built.landingPages().allFiles {
            #expect(dest.identity(file.path) == before[file.path], "\(file.path)")
        }
    }

    @Test func landingFilesAreBuildOwnedDownloadsOfTheirOwn() {
        for path in [
            "download/Ab-_0123456789abcdefghij.html", "download/Ab-_0123456789abcdefghij.fr-CA.html",
            "download/Ab-_0123456789abcdefghij.png", "download/badge-en.svg",
        ] {
            #expect(LandingComparison.isLandingFile(path), "\(path)")
        }
        for path in [
            "download/Ab-_0123456789abcdefghij.pkpass", "download/a.pkpasses", "download/.x.html",
            "download/a/b.html", "v1/passes/a/b.html", "download/../x.html", ".passforge/landing-pages.txt",
        ] {
            #expect(!LandingComparison.isLandingFile(path), "\(path)")
        }
    }
}

/// The same over rsync and ssh, to a real sshd on a loopback port.
@Suite(.serialized) struct LandingSSHPublishTests {
    @Test func pagesTravelOverSSHAndAKilledPublishsLeftoversGo() throws {
        let server = try SSHServer()
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-remote")
        let dest = DestinationTree(root: folder.file("site"))
        let target = "\(server.userHost):\(dest.root)"
        let ssh = ["PASSFORGE_SSH_COMMAND": server.sshCommand]
        let environment = ProcessInfo.processInfo.environment.merging(ssh) { $1 }
        let publisher = try Publisher(
            outputDirectory: built.output, destination: PublishDestination(parsing: target),
            environment: environment)
        let first = try publisher.publish()
        #expect(first.landingFilesSent == (try built.landingPages()).allFiles.count, "\(first)")
        try dest.expectSameLandingPages(as: built)
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))

        // Killed between the lists and the removals: the host lists the page files its list does not name.
        let gone = try built.landingPage("C-0002")
        try built.build(count: 2)
        try killPublish(built, to: target, at: "removing", environment: ssh)
        for file in gone.files { #expect(dest.exists(file.path), "\(file.path)") }
        let rerun = try publisher.publish()
        #expect(!rerun.stateSent && rerun.landingFilesRemoved == gone.files.count, "\(rerun)")
        for file in gone.files { #expect(!dest.exists(file.path), "\(file.path) is still there") }
        try dest.expectSameLandingPages(as: built)
        try dest.expectConsistent()
    }
}

/// The same to a bucket (SeaweedFS, scripts/with-seaweedfs.sh): each page file an object with its media type.
@Suite struct LandingObjectStoragePublishTests {
    @Test func pagesLandAsObjectsAndRemovedOnesAreDeleted() throws {
        let bucket = try BucketTree("landing")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 3)
        let publisher = try Publisher(
            outputDirectory: built.output,
            destination: .objectStorage(bucket: bucket.store.bucket, prefix: bucket.prefix),
            environment: bucket.environment)
        let first = try publisher.publish()
        let list = try built.landingPages()
        #expect(first.landingFilesSent == list.allFiles.count, "\(first)")
        for file in list.allFiles {
            let object = try #require(try bucket.object(file.path), "\(file.path) is missing")
            #expect(digest(object.body) == file.etag, "\(file.path)")
            let type =
                file.path.hasSuffix(".html")
                ? "text/html; charset=utf-8" : file.path.hasSuffix(".png") ? "image/png" : "image/svg+xml"
            #expect(object.contentType == type, "\(file.path)")
        }
        #expect(try bucket.object(LandingPageList.path)?.body == list.encoded)
        #expect(try publisher.publish().description.hasPrefix("nothing to publish"))

        let gone = try built.landingPage("C-0002")
        try built.build(count: 2)
        let removal = try publisher.publish()
        #expect(removal.landingFilesRemoved == gone.files.count, "\(removal)")
        for file in gone.files { #expect(try bucket.object(file.path) == nil, "\(file.path) is still there") }
    }
}
