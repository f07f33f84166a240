import ArgumentParser
import ConcurrencySupport
import Foundation
import PassContent
import RegistrationStore

struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers",
        abstract: "List each DeviceCheck offer's pool (passes, claimed, left) and the claims whose bit is not set yet.",
        discussion: """
            Reads the registration store that `passforge serve` uses (PASSFORGE_DATABASE_URL), where the
            pools are kept from the served build and the claims recorded. An offer of passforge.yml that
            no served build has filled yet shows 0.

            A claim whose DeviceCheck bit Apple has not confirmed (its update's answer was lost) is listed
            with its time: it holds its pass, and the app's retry of the same claim sets the bit. Until
            then the device could claim again; passforge keeps no token to set it by itself (Apple's
            tokens are single-use).

            Examples:
              passforge offers
              PASSFORGE_DATABASE_URL=postgres://passforge@db/passforge passforge offers --format json
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var project: ProjectOptions

    @Option(help: "text (a table) or json.")
    var format: Format = .text

    func run() async throws {
        // The process's one pool for the store's blocking work.
        let pool = BlockingPool(threadCount: 1)
        guard
            let (store, description) = try await StoreOpening.open(
                project: project.project, onlyIfPresent: true, pool: pool)
        else {
            Console.error(
                "no registration store yet (\(StoreLocation.environmentVariable) or \(StoreOpening.defaultSQLitePath(of: project.project))): no claims"
            )
            throw ExitCode.failure
        }
        var pools = Dictionary(uniqueKeysWithValues: try await store.offerStatistics().map { ($0.offer, $0) })
        for offer in (try? project.loadConfiguration().offers) ?? [] where pools[offer.name] == nil {
            pools[offer.name] = OfferStatistics(offer: offer.name, poolSize: 0, claimed: 0, left: 0)
        }
        let rows = pools.values.sorted { $0.offer < $1.offer }
        let unconfirmed = try await store.unconfirmedClaims(limit: 1000)
        switch format {
        case .json:
            let objects = rows.map {
                ["offer": $0.offer, "pool": $0.poolSize, "claimed": $0.claimed, "left": $0.left] as [String: Any]
            }
            let pending = unconfirmed.map {
                [
                    "offer": $0.offer, "claimIdentifier": $0.claimIdentifier,
                    "passTypeIdentifier": $0.passTypeIdentifier,
                    "serialNumber": $0.serialNumber, "claimedAt": Self.timestamp($0.claimedAt),
                ] as [String: Any]
            }
            let data = try JSONSerialization.data(
                withJSONObject: ["offers": objects, "unconfirmedClaims": pending],
                options: [.sortedKeys, .prettyPrinted])
            Console.print(String(decoding: data, as: UTF8.self))
        case .text:
            guard !rows.isEmpty else {
                Console.print("no offers (define them under offers: in passforge.yml; store: \(description))")
                return
            }
            let width = max(5, rows.map(\.offer.count).max() ?? 0)
            func padded(_ text: String, _ count: Int) -> String {
                text + String(repeating: " ", count: max(0, count - text.count))
            }
            func right(_ number: Int, _ count: Int) -> String {
                String(repeating: " ", count: max(0, count - String(number).count)) + String(number)
            }
            Console.print(padded("offer", width) + "     pool  claimed     left")
            for row in rows {
                Console.print(
                    padded(row.offer, width) + " " + right(row.poolSize, 8) + " " + right(row.claimed, 8) + " "
                        + right(row.left, 8))
            }
            guard !unconfirmed.isEmpty else { return }
            Console.print("\nclaims whose DeviceCheck bit is not set yet (the app's retry of the claim sets it):")
            for claim in unconfirmed {
                Console.print(
                    "  \(claim.offer)  \(claim.serialNumber)  claimed \(Self.timestamp(claim.claimedAt))  claim \(claim.claimIdentifier)"
                )
            }
        }
    }

    /// ISO 8601 in UTC, to the second.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds.rounded(.down)).formatted(.iso8601)
    }
}
