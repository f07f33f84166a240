import Testing

/// The README's static-host deployment with nginx, for real: nginx running
/// `deploy/nginx-passforge.conf` as shipped serves the tree the real CLI
/// built, answers every GET by itself, and sends only registrations, the
/// log and /health to `passforge serve`.
@Suite(.serialized) struct NginxDeploymentTests {
    @Test func nginxAloneAnswersPassesIndexFilesAndDownloads() async throws {
        try await StaticHostChecks.withoutPassforge(.nginx)
    }

    @Test func nginxSendsOnlyChangesToPassforgeAndKeepsServingWhenItStops() async throws {
        try await StaticHostChecks.withPassforgeStoppedHalfWay(.nginx)
    }

    @Test func anUpgradeRequestDoesNotStallTheNextClientThroughNginx() async throws {
        try await StaticHostChecks.upgradeRequestsDoNotStallTheNextClient(.nginx)
    }

    @Test func nginxServesBundlesWithTheirType() async throws {
        try await BundleDownloadTests.servedByStaticHost(.nginx)
    }
}
