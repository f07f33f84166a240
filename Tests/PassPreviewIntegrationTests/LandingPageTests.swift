import Foundation
import PassBuild
import PassContent
import PassPreview
import TestSupport
import Testing
import WalletTree

/// The landing page `passforge build` writes beside every download link, built in process with the
/// preview's renderer as the command line sets it.
@Suite("Landing pages")
struct LandingPageTests {
    static let secret = "landing-page-tests-secret"
    static let badge = Array(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"110\" height=\"34\"><rect width=\"110\" height=\"34\"/></svg>"
            .utf8)

    /// A project of `count` cards with `landingPages:` (a base URL, an English badge unless `badges` is false).
    func project(count: Int = 3, badges: Bool = true, extra: String = "") -> ProjectFixture {
        let project = ProjectFixture(passCount: count)
        var yaml = String(decoding: project.directory.read("passforge.yml")!, as: UTF8.self)
        yaml += "\nlandingPages:\n  baseURL: https://passes.example.com/\n"
        if badges {
            yaml += "  badges:\n    en: badges/add-en.svg\n"
            project.directory.write("badges/add-en.svg", bytes: Self.badge)
        }
        project.directory.write("passforge.yml", yaml + extra)
        return project
    }

    func build(_ project: ProjectFixture) throws -> BuildReport {
        var settings = try BuildSettings(
            projectFolder: project.root,
            environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: Self.secret),
            jobs: 2)
        settings.landingPages = try LandingPageRenderer(
            configuration: settings.configuration, templatesDirectory: settings.templatesDirectory)
        return try PassBuilder(settings: settings).build()
    }

    /// The landing page of `serial` (its default page) and the download it offers.
    func page(_ project: ProjectFixture, _ serial: String, language: String? = nil) throws -> (
        html: String, download: String
    ) {
        let state = try BuildState.load(from: project.output)
        let record = try #require(state.passes.values.first { $0.identifier == serial })
        let capability = String(try #require(TreeLayout.capability(ofDownloadPath: record.downloadPath)))
        let bytes = try #require(
            project.directory.read("output/\(TreeLayout.landingPagePath(capability: capability, language: language))"))
        return (String(decoding: bytes, as: UTF8.self), String(TreeLayout.fileName(of: record.downloadPath)))
    }

    @Test(
        "every pass gets a page: the badge links its download, QR of its own URL, noindex, no-referrer, CSP, Open Graph"
    )
    func pagePerPass() throws {
        let project = project()
        _ = try build(project)
        let state = try BuildState.load(from: project.output)
        #expect(state.passes.count == 3)
        for record in state.passes.values {
            let (html, download) = try page(project, record.identifier)
            let capability = String(download.dropLast(".pkpass".count))
            #expect(html.contains("<a class=\"badge\" href=\"\(download)\""))
            #expect(html.contains("<img src=\"badge-en.svg\" alt=\"Add to Apple Wallet\""))
            #expect(html.contains("<meta name=\"robots\" content=\"noindex"))
            #expect(html.contains("<meta name=\"referrer\" content=\"no-referrer\">"))
            #expect(html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;"))
            #expect(html.contains("<meta property=\"og:title\" content=\"passforge tests\">"))
            #expect(
                html.contains(
                    "<meta property=\"og:image\" content=\"https://passes.example.com/download/\(capability).png\">"))
            #expect(
                html.contains(
                    "<meta property=\"og:url\" content=\"https://passes.example.com/download/\(capability).html\">"))
            #expect(html.contains("class=\"handoff\"") && html.contains("<svg"))
            #expect(
                html.contains(record.identifier.replacingOccurrences(of: "C-", with: "")) || html.contains("Member"))
            // Nothing is loaded from elsewhere, and no script runs.
            #expect(!html.contains("<script"))
            #expect(!html.contains("src=\"http") && !html.contains("url('http") && !html.contains("href=\"//"))
            #expect(project.directory.read("output/download/\(capability).png") != nil)
        }
        #expect(project.directory.read("output/download/badge-en.svg") == Self.badge)
        #expect(project.directory.read("output/\(TreeLayout.landingPageListPath)") != nil)
    }

    @Test("hostile field values stay text on the page")
    func hostileValuesStayText() throws {
        let project = project(count: 0)
        project.directory.write(
            "content/hostile.yml",
            """
            template: card
            serialNumber: H-1
            data: { name: "<script>alert(1)</script><img src=x onerror=alert(2)>\\"'&amp;", points: 1 }
            """)
        _ = try build(project)
        let (html, _) = try page(project, "H-1")
        #expect(!html.contains("<script>alert(1)"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    }

    @Test("a voided or expired pass gets a page that says so, with no badge, no link and no QR code")
    func voidedAndExpired() throws {
        let project = project(count: 0)
        project.directory.write(
            "content/gone.yml",
            """
            template: card
            passes:
              - serialNumber: V-1
                data: { name: Voided, points: 1 }
                pass: { voided: true }
              - serialNumber: E-1
                data: { name: Expired, points: 1 }
                pass: { expirationDate: "2020-01-01T00:00:00Z" }
              - serialNumber: L-1
                data: { name: Live, points: 1 }
            """)
        _ = try build(project)
        for (serial, message) in [("V-1", "This pass is no longer valid."), ("E-1", "This pass has expired.")] {
            let (html, download) = try page(project, serial)
            #expect(html.contains(message))
            #expect(
                !html.contains("class=\"badge\"") && !html.contains("href=\"\(download)\"")
                    && !html.contains("class=\"handoff\""))
        }
        let (live, download) = try page(project, "L-1")
        #expect(live.contains("href=\"\(download)\""))
    }

    @Test("a page changes only when its pass does; a new template remakes every page")
    func incremental() throws {
        let project = project()
        _ = try build(project)
        let before = project.snapshot().filter { $0.key.hasPrefix("download/") && $0.key.hasSuffix(".html") }
        #expect(before.count == 3)
        let list = try #require(project.directory.read("output/\(TreeLayout.landingPageListPath)"))
        // Nothing changed: no page is written, nor the list.
        _ = try build(project)
        #expect(project.snapshot().filter { $0.key.hasSuffix(".html") } == before)
        #expect(project.directory.read("output/\(TreeLayout.landingPageListPath)") == list)
        // One pass changes: its page only.
        project.writeList(count: 3, points: { $0 == 1 ? 500 : $0 })
        let report = try build(project)
        #expect(report.built.count == 1)
        let after = project.snapshot().filter { $0.key.hasPrefix("download/") && $0.key.hasSuffix(".html") }
        let changed = after.keys.filter { after[$0] != before[$0] }
        #expect(changed.count == 1)
        #expect(after[changed[0]].map { String(decoding: $0, as: UTF8.self).contains("500") } == true)
        // A project template: every page is made again from it, and hostile values stay escaped.
        project.directory.write(
            "templates/_landing/page.mustache", "<p>{{title}}|{{download}}|{{#badge}}{{src}}{{/badge}}</p>")
        _ = try build(project)
        let custom = project.snapshot().filter { $0.key.hasPrefix("download/") && $0.key.hasSuffix(".html") }
        #expect(custom.count == 3)
        for (path, bytes) in custom {
            let capability = TreeLayout.fileName(of: path).dropLast(".html".count)
            #expect(
                String(decoding: bytes, as: UTF8.self) == "<p>passforge tests|\(capability).pkpass|badge-en.svg</p>")
        }
    }

    @Test("without badge files: a plain text link and one warning")
    func noBadges() throws {
        let project = project(badges: false)
        var settings = try BuildSettings(
            projectFolder: project.root,
            environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: Self.secret))
        let renderer = try LandingPageRenderer(
            configuration: settings.configuration, templatesDirectory: settings.templatesDirectory)
        #expect(renderer.warnings.count == 1)
        #expect(renderer.warnings.first?.contains("landingPages.badges") == true)
        settings.landingPages = renderer
        _ = try PassBuilder(settings: settings).build()
        let (html, download) = try page(project, "C-0000")
        #expect(html.contains("<a class=\"text-link\" href=\"\(download)\" rel=\"noreferrer\">Add to Apple Wallet</a>"))
        #expect(!html.contains("class=\"badge\""))
    }

    @Test("a page per language, linked to each other; the default page is the first language")
    func languages() throws {
        let project = project(count: 1)
        project.directory.write("templates/card/en.lproj/pass.strings", "\"Name\" = \"Name\";\n")
        project.directory.write("templates/card/fr.lproj/pass.strings", "\"Name\" = \"Nom\";\n")
        project.directory.write("badges/add-fr.svg", bytes: Self.badge)
        let yaml = String(decoding: project.directory.read("passforge.yml")!, as: UTF8.self)
        project.directory.write("passforge.yml", yaml + "    fr: badges/add-fr.svg\n")
        _ = try build(project)
        let (english, _) = try page(project, "C-0000", language: "en")
        let (french, _) = try page(project, "C-0000", language: "fr")
        let (fallback, _) = try page(project, "C-0000")
        // The default page is the first language's (its own URL in the QR code and og:url).
        #expect(
            fallback.contains("<html lang=\"en\">") && fallback.contains("badge-en.svg")
                && fallback.contains("hreflang=\"fr\""))
        #expect(french.contains("<html lang=\"fr\">") && french.contains("Nom") && french.contains("badge-fr.svg"))
        #expect(english.contains("<html lang=\"en\">") && english.contains("badge-en.svg"))
        let capability = try #require(
            TreeLayout.capability(
                ofDownloadPath: try BuildState.load(from: project.output).passes.values.first!.downloadPath))
        #expect(english.contains("href=\"\(capability).fr.html\" hreflang=\"fr\""))
        #expect(french.contains("href=\"\(capability).en.html\" hreflang=\"en\""))
    }
}
