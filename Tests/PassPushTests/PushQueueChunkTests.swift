import Foundation
import PassBuild
import PassModel
import PassPush
import RegistrationStore
import SQLiteRegistrationStore
import Synchronization
import TestSupport
import Testing
import WalletTree

/// A push run queues the changed passes in chunks, one transaction each; only the last advances the cursor.
@Suite struct PushQueueChunkTests {
    @Test func fivePassesInChunksOfTwoQueueEveryDeviceAndMoveTheCursorLast() async throws {
        let project = ProjectFixture(passCount: 5)
        let stateFolder = TemporaryDirectory("passforge-queue-chunks")
        let settings = try BuildSettings(
            projectFolder: project.root,
            environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: "queue-chunk-secret-0123456789ab"),
            jobs: 1)
        _ = try PassBuilder(settings: settings).build()
        let index = try PublishedIndex.load(from: project.output)
        let store = try SQLiteRegistrationStore(path: stateFolder.file("registrations.sqlite"))
        for (number, key) in index.items.keys.sorted(by: { $0.text < $1.text }).enumerated() {
            _ = try await store.register(
                device: "device\(number)", pushToken: token(number), passTypeIdentifier: key.typeIdentifier,
                serialNumber: key.identifier)
        }
        let queue = RecordingPushQueue(store: store)
        var run = PushRun(store: queue, output: OutputFolder(directory: project.output), senders: AcceptingSenders())
        run.queueChunk = 2

        let report = try await run.run(index: index)

        #expect(queue.calls.map(\.passes) == [2, 2, 1])
        #expect(queue.calls.map(\.cursor) == [.min, .min, index.lastUpdateTag])
        #expect(report.summary.succeeded == 5, "\(report.summaryLine)")
        #expect(try await store.pushCursor() == index.lastUpdateTag)
    }
}

/// The real store, recording each `queuePushes` call.
final class RecordingPushQueue: ForwardingPushQueue {
    let store: SQLiteRegistrationStore
    private let recorded = Mutex<[(passes: Int, cursor: Int64)]>([])

    init(store: SQLiteRegistrationStore) { self.store = store }

    var calls: [(passes: Int, cursor: Int64)] { recorded.withLock { $0 } }

    func queuePushes(for passes: [PassReference], advancingCursorTo cursor: Int64) async throws -> Int {
        recorded.withLock { $0.append((passes.count, cursor)) }
        return try await store.queuePushes(for: passes, advancingCursorTo: cursor)
    }
}

/// APNs accepting every push.
struct AcceptingSenders: PushSenderProvider {
    struct Client: APNsSending {
        let endpoint: APNsEndpoint
        func send(token: String, topic: String) async throws -> APNsResponse { APNsResponse(status: 200) }
    }

    func sender(topic: String, index: PublishedIndex) async throws -> PushSender {
        PushSender(client: Client(endpoint: try APNsEndpoint(parsing: "https://api.push.apple.com")))
    }
    func shutdown() async {}
}
