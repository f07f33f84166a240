import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PassBuild
import PassModel
import PassPush
import PassServer
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport
import Testing
import WalletTree

/// `serve --push` in one process: a registration (the web service) and a push run's dead-token cleanup
/// (`OutcomeRecorder`) both write device index files. Each change carries the store's revision, and the
/// writer skips one older than the last it wrote; that only holds when both go through the one index writer
/// of the process's tree. Here the cleanup's older change is held (awaited events, no sleep) until the
/// newer registration's file is written, then let go: it must not put back the older index.
@Suite struct ServePushIndexRaceTests {
    static let secret = "serve-push-race-token-secret-0123456789"

    @Test func deadTokenCleanupNeverOverwritesANewerRegistration() async throws {
        let contents = try await indexAfterRace(pushOutput: { $0 })
        #expect(
            contents?.contains("C-0000") == true,
            "the push's older change (the dead token's deletion) overwrote the newer registration's index: \(contents ?? "no file")"
        )
    }

    /// The device's index file after the race: a registration, the push's dead-token deletion held at the gate, a
    /// second registration, then the deletion let go. `pushOutput` gives the push run its tree from the server's.
    func indexAfterRace(pushOutput: (OutputFolder) -> OutputFolder) async throws -> String? {
        let project = ProjectFixture(passCount: 1)
        let stateFolder = TemporaryDirectory("passforge-race-state")
        let settings = try BuildSettings(
            projectFolder: project.root,
            environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: Self.secret), jobs: 1)
        _ = try PassBuilder(settings: settings).build()
        let index = try PublishedIndex.load(from: project.output)
        let token = TokenSecret(Self.secret, origin: "test")
            .authenticationToken(passTypeIdentifier: TestPKI.passType, serialNumber: "C-0000")
        let store = try SQLiteRegistrationStore(path: stateFolder.file("registrations.sqlite"))
        let gate = DeletionGate()
        // The process's one tree, as `serve --push` makes it: the server and the push run share it.
        let output = OutputFolder(directory: project.output)

        var configuration = PassServerConfiguration()
        configuration.registrationsPerMinute = 0
        let application = PassServer.application(
            configuration: configuration, output: output, store: store,
            logger: Logger(label: "test"))
        let run = PushRun(
            store: GatedPushQueue(store: store, gate: gate), output: pushOutput(output), senders: DeadTokenSenders())
        let registration = "/v1/devices/device0001/registrations/\(TestPKI.passType)/C-0000"
        let indexFile = output.path(TreeLayout.deviceIndexPath(device: "device0001", type: TestPKI.passType))
        let auth: HTTPFields = [.authorization: "ApplePass \(token)"]
        try await application.test(.router) { client in
            let first = ByteBuffer(string: #"{"pushToken":"0000000000000000000000000000dead"}"#)
            try await client.execute(uri: registration, method: .post, headers: auth, body: first) {
                #expect($0.status == .created)
            }
            // The push: APNs says the token is dead; the store deletes the device (revision r) and the run is held
            // before it removes the device's index file.
            let push = Task { try await run.run(index: index) }
            await gate.deleted()
            // Meanwhile the device registers again with a new token (revision > r): its index file lists the pass.
            let second = ByteBuffer(string: #"{"pushToken":"00000000000000000000000000000a11"}"#)
            try await client.execute(uri: registration, method: .post, headers: auth, body: second) {
                #expect($0.status == .created)
            }
            #expect(AtomicFileSystemProbe.contents(indexFile)?.contains("C-0000") == true)
            gate.release()
            let report = try await push.value
            #expect(report.summary.tokensInvalid == 1, "\(report.summaryLine)")
        }
        // The store holds the second registration; the file must say so too.
        #expect(try await store.serialNumbers(device: "device0001", passTypeIdentifier: TestPKI.passType) == ["C-0000"])
        return AtomicFileSystemProbe.contents(indexFile)
    }
}

/// Reads a file for the checks above.
enum AtomicFileSystemProbe {
    static func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Two awaited events: the store deleted the dead token's device, and the test lets the run go on.
final class DeletionGate: Sendable {
    private let reached = AsyncStream.makeStream(of: Void.self)
    private let released = AsyncStream.makeStream(of: Void.self)

    /// Returns once a deletion happened (and holds it).
    func deleted() async {
        for await _ in reached.stream { return }
    }

    func release() { released.continuation.yield() }

    fileprivate func hold() async {
        reached.continuation.yield()
        for await _ in released.stream { return }
    }
}

/// The real store, with `deleteDevices` held at the gate after its transaction committed.
struct GatedPushQueue: ForwardingPushQueue {
    let store: SQLiteRegistrationStore
    let gate: DeletionGate

    func deleteDevices(pushToken: String, invalidSince: Double?) async throws -> [RegistrationChange] {
        let changes = try await store.deleteDevices(pushToken: pushToken, invalidSince: invalidSince)
        await gate.hold()
        return changes
    }
}

/// APNs answering every push 410 Unregistered: the token is dead.
struct DeadTokenSenders: PushSenderProvider {
    struct Client: APNsSending {
        let endpoint: APNsEndpoint
        func send(token: String, topic: String) async throws -> APNsResponse {
            APNsResponse(status: 410, reason: "Unregistered")
        }
    }

    func sender(topic: String, index: PublishedIndex) async throws -> PushSender {
        PushSender(client: Client(endpoint: try APNsEndpoint(parsing: "https://api.push.apple.com")))
    }
    func shutdown() async {}
}
