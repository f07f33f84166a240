import Foundation
import NIOHTTP1
import PassBuild
import TestSupport
import Testing
import WalletTree

/// `.pkpasses` bundles served as `application/vnd.apple.pkpasses`, by
/// `passforge serve` and by the shipped nginx and Caddy configurations.
@Suite struct BundleDownloadTests {
    /// A built project with `content/family.yml` declaring `bundle: family`; returns its download path.
    static func projectWithBundle() async throws -> (BuiltProject, String) {
        let built = try await BuiltProject.make(passCount: 1)
        built.project.directory.write(
            "content/family.yml",
            """
            template: card
            bundle: family
            passes:
              - serialNumber: F-1
                data: { name: Ann, points: 1 }
              - serialNumber: F-2
                data: { name: Bo, points: 2 }
            """)
        try await built.build()
        let csv = String(decoding: built.fileBytes(".passforge/downloads.csv") ?? [], as: UTF8.self)
        guard let row = csv.split(separator: "\n").first(where: { $0.hasPrefix("bundle,family,") }) else {
            throw HarnessError("downloads.csv lists no bundle: \(csv)")
        }
        return (built, String(row.dropFirst("bundle,family,".count)))
    }

    /// 200 with the bundle's bytes and type, and 304 for its own ETag; another name is 404.
    static func bundleIsServed(_ client: Client, built: BuiltProject, path: String) async throws {
        let answer = try await client.send(.GET, "/\(path)")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/vnd.apple.pkpasses")
        #expect(answer.body == built.fileBytes(path))
        let etag = try #require(answer.header("ETag"))
        #expect(try await client.send(.GET, "/\(path)", headers: ["If-None-Match": etag]).status == 304)
        #expect(try await client.send(.GET, "/download/AAAAAAAAAAAAAAAAAAAAAA.pkpasses").status == 404)
        // A pass's own download keeps its type.
        let record = try built.record("F-1")
        let pass = try await client.send(.GET, "/\(record.downloadPath)")
        #expect(pass.status == 200 && pass.header("Content-Type") == "application/vnd.apple.pkpass")
    }

    static func servedByStaticHost(_ server: StaticHost.Server) async throws {
        let (built, path) = try await projectWithBundle()
        let host = try await StaticHost(server, root: built.output, upstreamPort: freeLoopbackPort())
        defer { host.terminate() }
        try await bundleIsServed(Client(base: host.base), built: built, path: path)
    }

    @Test func passforgeServeServesABundleWithItsType() async throws {
        let (built, path) = try await Self.projectWithBundle()
        let server = try await ServerProcess(built)
        defer { server.terminate() }
        try await Self.bundleIsServed(Client(base: server.base), built: built, path: path)
    }
}
