import Foundation
import MockAPNs
import NIOCore
import NIOPosix
import PassPush
import TestSupport

// Pushes N distinct tokens through PushSender into the in-process APNs mock
// over loopback (TLS + HTTP/2, one connection) and prints the rate.
// Usage: push-benchmark [pushes=20000] [inFlight=500] [serverMaxStreams=1000] [headerTableSize=4096]
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let pushes = arguments.count > 0 ? arguments[0] : 20_000
let inFlight = arguments.count > 1 ? arguments[1] : 500
let serverStreams = arguments.count > 2 ? arguments[2] : 1000
let headerTableSize = arguments.count > 3 ? arguments[3] : 4096
let topic = TestPKI.passType

let pki = TestPKI.shared
let serverCertificate = pki.apnsServerCertificate()
let leaf = pki.leaf()
// The mock gets its own event loop thread, so that it does not share one with
// the client's connection (the client uses one loop of the singleton group).
let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let mock = try await MockAPNsServer.start(
    MockAPNsServer.Configuration(
        certificateChainPEM: pki.pemBytes(serverCertificate.certificate),
        privateKeyPEM: pki.pemBytes(serverCertificate.key),
        trustRootsPEM: pki.pemBytes(pki.root),
        maxConcurrentStreams: serverStreams,
        headerTableSize: headerTableSize,
        recordsRequests: false
    ), group: serverGroup)
let client = try APNsClient(
    identity: APNsClientIdentity(certificateChainPEM: pki.clientChainPEM(leaf), privateKeyPEM: pki.pemBytes(leaf.key)),
    configuration: APNsConfiguration(
        baseURL: mock.baseURL,
        additionalTrustRootsPEM: pki.pemBytes(pki.root),
        maxRequestsInFlight: inFlight
    )
)
let notifications = (0..<pushes).map { number -> PushNotification in
    let hex = String(number, radix: 16)
    return PushNotification(token: String(repeating: "0", count: 64 - hex.count) + hex, topic: topic)
}

let sender = PushSender(client: client)
/// User + system CPU time of this process so far, in seconds: unlike the wall
/// clock, it does not depend on what else the (shared, 2-core) machine runs.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

let clock = ContinuousClock()
let cpuStart = processCPUSeconds()
let start = clock.now
let summary = await sender.send(notifications) { outcome in
    if case .delivered = outcome.result { return }
    if ProcessInfo.processInfo.environment["BENCH_VERBOSE"] != nil { print("not delivered: \(outcome)") }
}
let elapsed = clock.now - start
let cpu = processCPUSeconds() - cpuStart
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

print(
    "pushes:              \(pushes) (succeeded \(summary.succeeded), retries "
        + "\(summary.retries), pending \(summary.leftPending))")
print("time:                \(String(format: "%.3f", seconds)) s")
print("rate:                \(Int(Double(summary.succeeded) / seconds)) pushes/s")
print(
    "CPU:                 \(String(format: "%.3f", cpu)) s (client + server), "
        + "\(Int(cpu / Double(max(1, summary.sent)) * 1e6)) µs per push")
print("in flight (client):  \(inFlight); server max streams \(serverStreams)")
print(
    "TCP connections:     \(mock.connectionsAccepted) accepted by the mock, "
        + "\(client.connectionsEstablished) established by the client")
print("max streams at once: \(mock.maxStreamsInFlight)")
if let stop = summary.stopReason { print("stopped:             \(stop.message)") }

try await client.shutdown()
try await mock.shutdown()
try await serverGroup.shutdownGracefully()
