import Foundation
import MockDeviceCheck
import PassOffers
import PostgresRegistrationStore
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport

// DeviceCheck offer claims per second: OfferClaimService with the real
// DeviceCheck client (HTTPS, HTTP/2, ES256 JWT) against the in-process mock of
// Apple on loopback, on SQLite and, with --postgres URL, on PostgreSQL. Every
// claim is a new device with two fresh tokens: their digests recorded as spent,
// a bit query, the assignment in one transaction, the bit update and the
// claim's completion.
// Usage: claim-benchmark [--claims 3000] [--concurrency 64] [--postgres URL]
struct Options {
    var claims = 3_000
    var concurrency = 64
    var postgresURL: String?

    init(_ arguments: [String]) {
        var arguments = arguments[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--claims": claims = max(2, Int(arguments.popFirst() ?? "") ?? claims)
            case "--concurrency": concurrency = max(1, Int(arguments.popFirst() ?? "") ?? concurrency)
            case "--postgres": postgresURL = arguments.popFirst()
            default:
                print("usage: claim-benchmark [--claims N] [--concurrency N] [--postgres URL]")
                exit(2)
            }
        }
    }
}
let options = Options(Array(CommandLine.arguments.dropFirst()))
let goal = 500.0

func run(store: any RegistrationDatabase, name: String, claims: Int, concurrency: Int) async throws -> Double {
    let rig = try await DeviceCheckRig.start(recordsRequests: false)
    let offer = "bench-\(UUID().uuidString.prefix(8))"
    try await store.replaceOfferPools(
        with: (0..<claims).map {
            OfferPass(offer: offer, passTypeIdentifier: "pass.com.example.coupon", serialNumber: "\(offer)-\($0)")
        })
    let service = OfferClaimService(
        offers: [OfferDefinition(name: offer, bit: 0)], store: store, deviceCheck: rig.client)
    let requests = (0..<claims).map {
        ClaimRequest(
            claimIdentifier: UUID().uuidString, queryToken: MockDeviceCheckServer.deviceToken(for: "device-\($0)"),
            updateToken: MockDeviceCheckServer.deviceToken(for: "device-\($0)"))
    }
    // One claim first: the connection and the JWT are made outside the timing.
    _ = try await service.claim(
        offer: offer,
        ClaimRequest(
            claimIdentifier: UUID().uuidString,
            queryToken: MockDeviceCheckServer.deviceToken(for: "warm-up"),
            updateToken: MockDeviceCheckServer.deviceToken(for: "warm-up")))
    let start = ContinuousClock.now
    let created = try await withThrowingTaskGroup(of: Bool.self) { group in
        var next = 0
        var created = 0
        func add(_ index: Int) {
            group.addTask {
                if case .created = try await service.claim(offer: offer, requests[index]) { return true }
                return false
            }
        }
        while next < min(concurrency, claims - 1) {
            add(next)
            next += 1
        }
        while let result = try await group.next() {
            if result { created += 1 }
            if next < claims - 1 {
                add(next)
                next += 1
            }
        }
        return created
    }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let rate = Double(created) / seconds
    let verdict = rate >= goal ? "meets" : "MISSES"
    print(
        String(
            format: "claims on %@: %d in %.2f s = %.0f claims/s (concurrency %d) — %@ the goal of %.0f/s",
            name, created, seconds, rate, concurrency, verdict, goal))
    await rig.shutdown()
    return rate
}

let folder = TemporaryDirectory("passforge-claim-bench")
let sqlite = try SQLiteRegistrationStore(path: folder.file("registrations.sqlite"))
_ = try await run(store: sqlite, name: "SQLite", claims: options.claims, concurrency: options.concurrency)
if let postgresURL = options.postgresURL {
    let postgres = try await PostgresRegistrationStore.connect(url: postgresURL)
    _ = try await run(store: postgres, name: "PostgreSQL", claims: options.claims, concurrency: options.concurrency)
    await postgres.shutdown()
}
