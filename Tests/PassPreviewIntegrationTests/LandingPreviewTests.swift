import AtomicFiles
import Foundation
import TestSupport
import Testing
import WalletTree

@testable import PassPreview

/// `passforge preview` after `passforge build`: each pass's page (a bundle's: the index) links the landing page the
/// build made, copied into the gallery's `_landing/` with its logo, badge and download, so it opens from file://
/// and `--watch` serves it.
@Suite struct LandingPreviewTests {
    static let badge = Array(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"110\" height=\"34\"><rect width=\"110\" height=\"34\"/></svg>"
            .utf8)

    @Test func aPassPageLinksItsLandingPageAndTheGalleryHoldsIt() throws {
        let project = ProjectFixture(passCount: 2)
        let yaml = String(decoding: project.directory.read("passforge.yml") ?? [], as: UTF8.self)
        project.directory.write("passforge.yml", yaml + "\nlandingPages:\n  badges:\n    en: badges/add-en.svg\n")
        project.directory.write("badges/add-en.svg", bytes: Self.badge)
        project.directory.write(
            "content/family.yml",
            """
            template: card
            bundle: family
            passes:
              - serialNumber: F-0
                data: { name: "Member 0", points: 1 }
            """)
        let environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        let built = try project.passforge(["build"], environment: environment)
        #expect(built.status == 0, "\(built.output)")
        let gallery = project.directory.file("gallery")
        let preview = try project.passforge(["preview", "--out", gallery], environment: environment)
        #expect(preview.status == 0, "\(preview.output)")

        let list = try #require(
            AtomicFileSystem.readFile("\(project.output)/\(LandingPageList.path)").flatMap(
                LandingPageList.init(decoding:)))
        let record = try #require(list.pages["\(TestPKI.passType)/C-0001"])
        let pagePath = try #require(record.pagePath)
        let name = String(TreeLayout.fileName(of: pagePath))
        let passPage = String(
            decoding: AtomicFileSystem.readFile("\(gallery)/\(TestPKI.passType)/C-0001.html") ?? [], as: UTF8.self)
        #expect(
            passPage.contains("<a class=\"landing\" href=\"../_landing/\(name)\">landing page</a>"),
            "\(passPage.prefix(600))")
        // The page, its logo, the badge and the download, under their own names: the page's relative links hold.
        for file in record.files + Array(list.badges.values) {
            #expect(
                AtomicFileSystem.readFile("\(gallery)/_landing/\(TreeLayout.fileName(of: file.path))")
                    == AtomicFileSystem.readFile("\(project.output)/\(file.path)"), "\(file.path)")
        }
        let capability = String(try #require(TreeLayout.capability(ofDownloadPath: pagePath)))
        #expect(AtomicFileSystem.readFile("\(gallery)/_landing/\(capability).pkpass") != nil)

        // A bundle has no page in the gallery: the index links its landing page, copied with its download.
        let bundlePage = try #require(list.pages["bundle/family"]?.pagePath)
        let bundleName = String(TreeLayout.fileName(of: bundlePage))
        let index = String(decoding: AtomicFileSystem.readFile("\(gallery)/index.html") ?? [], as: UTF8.self)
        #expect(index.contains("<a class=\"landing\" href=\"_landing/\(bundleName)\">family</a>"), "\(index)")
        #expect(
            AtomicFileSystem.readFile("\(gallery)/_landing/\(bundleName)")
                == AtomicFileSystem.readFile("\(project.output)/\(bundlePage)"))
        let bundleCapability = String(try #require(TreeLayout.capability(ofDownloadPath: bundlePage)))
        #expect(AtomicFileSystem.readFile("\(gallery)/_landing/\(bundleCapability).pkpasses") != nil)

        // Served by --watch with the types a browser needs (an SVG badge shows only as image/svg+xml).
        #expect(PreviewWatcher.contentType(of: "_landing/badge-en.svg") == "image/svg+xml")
        #expect(PreviewWatcher.contentType(of: "_landing/\(name)") == "text/html; charset=utf-8")
        #expect(PreviewWatcher.contentType(of: "_landing/\(capability).pkpass") == "application/vnd.apple.pkpass")

        // Without a build (or with pages switched off) a page has no link, and the copies go.
        try FileManager.default.removeItem(atPath: "\(project.output)/\(LandingPageList.path)")
        #expect(try project.passforge(["preview", "--out", gallery], environment: environment).status == 0)
        let unlinked = String(
            decoding: AtomicFileSystem.readFile("\(gallery)/\(TestPKI.passType)/C-0001.html") ?? [], as: UTF8.self)
        #expect(!unlinked.contains("class=\"landing\""))
        #expect(AtomicFileSystem.readFile("\(gallery)/_landing/\(name)") == nil)
    }
}
