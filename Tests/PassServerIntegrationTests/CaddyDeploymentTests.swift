import Testing

/// The README's static-host deployment with Caddy 2, for real: Caddy running
/// `deploy/Caddyfile` as shipped (`caddy run --config deploy/Caddyfile
/// --adapter caddyfile`) serves the tree the real CLI built, answers every
/// GET by itself, and sends only registrations, the log and /health to
/// `passforge serve`.
@Suite(.serialized) struct CaddyDeploymentTests {
    @Test func caddyAloneAnswersPassesIndexFilesAndDownloads() async throws {
        try await StaticHostChecks.withoutPassforge(.caddy)
    }

    @Test func caddySendsOnlyChangesToPassforgeAndKeepsServingWhenItStops() async throws {
        try await StaticHostChecks.withPassforgeStoppedHalfWay(.caddy)
    }

    @Test func anUpgradeRequestDoesNotStallTheNextClientThroughCaddy() async throws {
        try await StaticHostChecks.upgradeRequestsDoNotStallTheNextClient(.caddy)
    }

    @Test func caddyServesBundlesWithTheirType() async throws {
        try await BundleDownloadTests.servedByStaticHost(.caddy)
    }
}
