import AtomicFiles
import Foundation
import TestSupport
import Testing
import WalletTree

@testable import PassPreview

/// `passforge links` has a row for each `.pkpasses` bundle: its landing page, its download and a snippet.
@Suite struct LandingLinksBundleTests {
    @Test func aBundleHasItsRowAfterTheItems() throws {
        let project = ProjectFixture(passCount: 2)
        let yaml = String(decoding: project.directory.read("passforge.yml") ?? [], as: UTF8.self)
        project.directory.write("passforge.yml", yaml + "\nlandingPages:\n  baseURL: https://passes.example.com/\n")
        var family = "template: card\nbundle: family\npasses:\n"
        for i in 0..<2 { family += "  - serialNumber: F-\(i)\n    data: { name: \"Member \(i)\", points: \(i) }\n" }
        project.directory.write("content/family.yml", family)
        let environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        let built = try project.passforge(["build"], environment: environment)
        #expect(built.status == 0, "\(built.output)")

        let bundle = try #require(LandingLinks.bundles(in: project.output)["family"])
        let pages = try #require(LandingLinks.pageList(in: project.output))
        let pagePath = try #require(pages.pages["bundle/family"]?.pagePath)
        let index = try PublishedIndex.load(from: project.output)
        let links = LandingLinks(
            index: index, pages: pages, bundles: LandingLinks.bundles(in: project.output), baseURL: nil,
            filter: .init())
        let row = try #require(links.rows.last)
        #expect(links.rows.count == index.items.count + 1)
        #expect(
            row.kind == "bundle" && row.identifier == "family" && row.template == "card"
                && row.typeIdentifier == TestPKI.passType)
        #expect(row.landingURL == "https://passes.example.com/\(pagePath)")
        #expect(row.downloadURL == "https://passes.example.com/\(bundle.downloadPath)")
        #expect(row.snippet.contains("href=\"\(row.downloadURL)\"") && row.snippet.contains("Add to Apple Wallet"))

        // Chosen by its name like a serial, or by its members' template; an offer filter leaves it out.
        let byName = LandingLinks(
            index: index, pages: pages, bundles: LandingLinks.bundles(in: project.output), baseURL: nil,
            filter: .init(serials: ["family"]))
        #expect(byName.rows.map(\.kind) == ["bundle"])
        let byOffer = LandingLinks(
            index: index, pages: pages, bundles: LandingLinks.bundles(in: project.output), baseURL: nil,
            filter: .init(offer: "welcome"))
        #expect(!byOffer.rows.contains { $0.kind == "bundle" })

        let csv = try project.passforge(["links", "family", "--format", "csv"], environment: environment)
        #expect(csv.status == 0, "\(csv.output)")
        #expect(
            csv.stdout.contains("\nbundle,\(TestPKI.passType),family,card,,https://passes.example.com/\(pagePath),"),
            "\(csv.stdout)")
    }
}
