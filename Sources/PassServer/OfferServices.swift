package import Logging
package import PassOffers
package import RegistrationStore
import ServiceLifecycle
package import WalletTree

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

    package func react(to build: PublishedIndex) async {
        let passes = build.items.values.compactMap { item in
            item.offer.map {
                OfferPass(offer: $0, passTypeIdentifier: item.typeIdentifier, serialNumber: item.identifier)
            }
        }
        do {
            try await store.replaceOfferPools(with: passes)
            if !passes.isEmpty {
                logger.info(
                    "new build \(build.lastUpdateTag): \(passes.count) pass\(passes.count == 1 ? "" : "es") in offer pools"
                )
            }
        } catch {
            logger.error(
                "new build \(build.lastUpdateTag): the offer pools could not be updated (\(error)); claims use the previous pools until the next build"
            )
        }
    }
}

/// Forgets, in the background, the digests of DeviceCheck tokens spent longer ago than Apple honours a
/// token (`OfferClaimService.tokenRetention`): at start, then every `interval`.
package struct SpentTokenPurger: Service {
    private let service: OfferClaimService
    private let interval: Duration
    private let logger: Logger

    package init(service: OfferClaimService, interval: Duration = .seconds(3600), logger: Logger) {
        self.service = service
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let purged = try await service.purgeSpentTokens()
                if purged > 0 {
                    logger.info("offers: forgot \(purged) spent DeviceCheck token digest\(purged == 1 ? "" : "s")")
                }
            } catch {
                logger.error("offers: spent DeviceCheck token digests could not be purged (\(error)); retrying later")
            }
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
    }
}
