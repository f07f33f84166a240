package import Logging
package import WalletTree
package import PassOffers
package import RegistrationStore
import ServiceLifecycle

/// Keeps the offers' pools in the registration store equal to the passes the
/// served build puts in them (`offer:` in content), at start and after each
/// new build: a pass removed from content leaves its pool, a claimed pass
/// stays claimed (`OfferClaimStore.replaceOfferPools`).
package struct OfferPoolsOnNewBuild: NewBuildReaction {
    private let store: any OfferClaimStore
    private let logger: Logger

    package init(store: any OfferClaimStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    package func react(to build: BuildState) async {
        let passes = build.passes.values.compactMap { record in
            record.offer.map { OfferPass(offer: $0, passTypeIdentifier: record.passTypeIdentifier, serialNumber: record.serialNumber) }
        }
        do {
            try await store.replaceOfferPools(with: passes)
            if !passes.isEmpty { logger.info("new build \(build.lastUpdateTag): \(passes.count) pass\(passes.count == 1 ? "" : "es") in offer pools") }
        } catch {
            logger.error("new build \(build.lastUpdateTag): the offer pools could not be updated (\(error)); claims use the previous pools until the next build")
        }
    }
}

/// Sets, in the background, the DeviceCheck bits of claims whose update
/// failed when they were made: a claim is never lost, and never gives its
/// pass to a second device. At start it tries every pending claim; then, every
/// `interval`, those at least `interval` old (a younger one may still be setting its bit).
package struct PendingBitRetrier: Service {
    private let service: OfferClaimService
    private let interval: Duration
    private let logger: Logger

    package init(service: OfferClaimService, interval: Duration = .seconds(60), logger: Logger) {
        self.service = service
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        // At start no request of this server is setting a bit: every pending claim is retried at once
        // (a server killed mid-claim leaves one); after that, those at least `interval` old.
        var minimumAge = 0.0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            defer { minimumAge = Double(interval.components.seconds) }
            do {
                let set = try await service.retryPendingBitUpdates(minimumAge: minimumAge)
                if set > 0 { logger.info("offers: set the DeviceCheck bit of \(set) earlier claim\(set == 1 ? "" : "s")") }
            } catch {
                logger.error("offers: pending DeviceCheck bits could not be read (\(error)); retrying later")
            }
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
    }
}
