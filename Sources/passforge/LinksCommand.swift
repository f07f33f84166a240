import ArgumentParser
import Foundation
import PassPreview
import WalletTree

struct LinksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "links",
        abstract: "Print each item's landing page URL, download URL and an email snippet (CSV, JSON or HTML).",
        discussion: """
            Reads the last build (output/.passforge/state.json, bundles.json and landing-pages.txt); renders nothing. The URLs start \
            with landingPages.baseURL of passforge.yml (else webServiceURL's origin), or --base-url. The snippet is a \
            table with inline styles: the badge (an absolute image URL with alt text) links the download, and a line \
            links the landing page for a computer. Expired or voided items have no snippet.

            Examples:
              passforge links --format csv > mailing.csv
              passforge links --template boarding --format json
              passforge links --offer welcome
              passforge links BA-2026-0001 --format html > snippet.html
            """
    )

    @OptionGroup var project: ProjectOptions

    @Option(help: "csv, json or html.")
    var format: LandingLinks.Format = .csv

    @Option(help: "Only the items made from this template.")
    var template: String?

    @Option(help: "Only the passes of this DeviceCheck offer.")
    var offer: String?

    @Option(
        help:
            "The absolute URL the output folder is served at (default: landingPages.baseURL, else webServiceURL's origin)."
    )
    var baseURL: String?

    @Option(help: "The badge's language in the snippets (default en).")
    var language = "en"

    @Argument(help: "Serial numbers (order identifiers, bundle names) to print; all when none.")
    var serials: [String] = []

    func run() throws {
        let output = project.output
        let index = try Console.runReportingErrors { try PublishedIndex.load(from: output) }
        guard !index.items.isEmpty else {
            Console.error("error: \(output)/ has no build yet; run `passforge build` first")
            throw ExitCode.failure
        }
        if let baseURL, URL(string: baseURL)?.host == nil {
            Console.error("error: --base-url \(baseURL) is not an absolute URL, e.g. https://passes.example.com/")
            throw ExitCode.failure
        }
        let pages = LandingLinks.pageList(in: output)
        if pages == nil {
            Console.error(
                "warning: \(output)/ has no landing pages (landingPages.enabled is false, or built before them): the URLs are where a build puts them"
            )
        }
        let links = LandingLinks(
            index: index, pages: pages, bundles: LandingLinks.bundles(in: output),
            baseURL: baseURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" },
            filter: .init(template: template, offer: offer, serials: Set(serials)), language: language)
        if links.rows.isEmpty {
            Console.error("no item matches")
            throw ExitCode.failure
        }
        if links.rows.first?.landingURL.hasPrefix("download/") == true {
            Console.error(
                "warning: no base URL (landingPages.baseURL, webServiceURL or --base-url): the URLs are relative to the output folder"
            )
        }
        FileHandle.standardOutput.write(Data(links.rendered(as: format).utf8))
    }
}

extension LandingLinks.Format: ExpressibleByArgument {}
