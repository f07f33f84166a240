import Foundation
import MockAPNs
import NIOCore
import NIOPosix
import TestSupport

// The in-process APNs mock (HTTP/2 + mutual TLS, every push answered 200) as a process of its own, so that
// a script can push through it with the real `passforge push` (scripts/bench-scale.py).
//
// Usage: mock-apns [passTypeIdentifier] [serverMaxStreams=1000]
// Prints one JSON line: the environment that makes `passforge build` sign with a Pass Type ID certificate of a
// throwaway test PKI (for that pass type and TestPKI.team) and `passforge push` reach this mock
// (PASSFORGE_APNS_URL, PASSFORGE_APNS_CA_CERTIFICATE). Then, for each line read on standard input, one JSON line
// of counts so far: pushes answered, TCP connections accepted, the most streams at once on one connection.
// Standard input closed: the mock stops and the PKI's folder is deleted.

let arguments = Array(CommandLine.arguments.dropFirst())
let passType = arguments.first ?? TestPKI.passType
let serverStreams = arguments.count > 1 ? Int(arguments[1]) ?? 1000 : 1000

func printLine(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

let pki = TestPKI.shared
let serverCertificate = pki.apnsServerCertificate()
let leaf = pki.leaf(passType: passType)
// The mock's own event loop thread: the reads of standard input below block the main thread.
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let mock = try await MockAPNsServer.start(
    MockAPNsServer.Configuration(
        certificateChainPEM: pki.pemBytes(serverCertificate.certificate),
        privateKeyPEM: pki.pemBytes(serverCertificate.key),
        trustRootsPEM: pki.pemBytes(pki.root),
        maxConcurrentStreams: serverStreams,
        recordsRequests: false
    ), group: group)

var environment = pki.environment(leaf)
environment.removeValue(forKey: "PASSFORGE_TOKEN_SECRET")  // the caller's own
environment["PASSFORGE_APNS_URL"] = mock.baseURL
environment["PASSFORGE_APNS_CA_CERTIFICATE"] = pki.root
printLine(["environment": environment, "passTypeIdentifier": passType])

while readLine() != nil {
    printLine([
        "pushes": mock.requestCount, "connections": mock.connectionsAccepted,
        "maxStreamsInFlight": mock.maxStreamsInFlight,
    ])
}
try await mock.shutdown()
try await group.shutdownGracefully()
try? FileManager.default.removeItem(atPath: pki.directory.path)
