import Foundation
import NIOHTTP1
import TestSupport
import Testing
import WalletTree

/// The landing pages `passforge build` writes, served by nginx and Caddy with the shipped configs and by
/// `passforge serve`: HTML with no-referrer, noindex and the pages' Content-Security-Policy, the page in the
/// browser's language when the build wrote one, the logo as an image.
@Suite(.serialized) struct LandingPageHostTests {
    static let policy =
        "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

    /// A built project whose first pass also has a French page (written by hand, as a build of a pass with
    /// fr.lproj would: the negotiation is the host's, whatever the page holds).
    static func builtWithFrenchPage() async throws -> (BuiltProject, capability: String) {
        let built = try await BuiltProject.make(passCount: 2)
        let record = try built.record("C-0000")
        let capability = String(try #require(TreeLayout.capability(ofDownloadPath: record.downloadPath)))
        built.project.directory.write(
            "output/download/\(capability).fr.html", "<!DOCTYPE html><html lang=\"fr\"><p>page française</p>")
        return (built, capability)
    }

    static func checks(base: String, capability: String, built: BuiltProject, host: String) async throws {
        let client = Client(base: base)
        let page = try await client.send(.GET, "/download/\(capability).html")
        #expect(page.status == 200, "\(host)")
        #expect(page.header("Content-Type")?.lowercased() == "text/html; charset=utf-8", "\(host)")
        #expect(page.header("Referrer-Policy") == "no-referrer", "\(host)")
        #expect(page.header("X-Robots-Tag") == "noindex, nofollow", "\(host)")
        #expect(page.header("Content-Security-Policy") == policy, "\(host)")
        #expect(page.body == built.fileBytes("download/\(capability).html"), "\(host)")
        #expect(String(decoding: page.body, as: UTF8.self).contains("href=\"\(capability).pkpass\""), "\(host)")
        // A French browser gets the French page; an English one the default.
        let french = try await client.send(
            .GET, "/download/\(capability).html", headers: ["Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5"])
        #expect(
            french.status == 200 && String(decoding: french.body, as: UTF8.self).contains("page française"), "\(host)")
        let english = try await client.send(
            .GET, "/download/\(capability).html", headers: ["Accept-Language": "en-GB,en"])
        #expect(english.body == page.body, "\(host)")
        let explicit = try await client.send(.GET, "/download/\(capability).fr.html")
        #expect(explicit.status == 200 && explicit.header("Referrer-Policy") == "no-referrer", "\(host)")
        let logo = try await client.send(.GET, "/download/\(capability).png")
        #expect(logo.status == 200 && logo.header("Content-Type") == "image/png", "\(host)")
        #expect(logo.header("X-Robots-Tag") == "noindex, nofollow", "\(host)")
        let missing = try await client.send(.GET, "/download/AAAAAAAAAAAAAAAAAAAAAA.html")
        #expect(missing.status == 404, "\(host)")
        // The pass itself is still served as a pass.
        let pass = try await client.send(.GET, "/download/\(capability).pkpass")
        #expect(pass.status == 200 && pass.header("Content-Type") == "application/vnd.apple.pkpass", "\(host)")
    }

    @Test(arguments: [StaticHost.Server.nginx, .caddy])
    func staticHostsServeLandingPagesWithTheirHeaders(server: StaticHost.Server) async throws {
        let (built, capability) = try await Self.builtWithFrenchPage()
        let host = try await StaticHost(server, root: built.output, upstreamPort: freeLoopbackPort())
        defer { host.terminate() }
        try await Self.checks(base: host.base, capability: capability, built: built, host: "\(server)")
    }

    @Test func passforgeServeServesLandingPagesWithTheSameHeaders() async throws {
        let (built, capability) = try await Self.builtWithFrenchPage()
        let server = try await ServerProcess(built)
        defer { server.terminate() }
        try await Self.checks(base: server.base, capability: capability, built: built, host: "passforge serve")
    }
}
