import Foundation
import MockAPNs
import TestSupport
import Testing
import WalletTree

/// Orders through `passforge build --push` against the in-process APNs mock
/// (HTTP/2, mutual TLS): an order whose status changes is pushed exactly once
/// per push token, on the order type identifier's topic, with the Order Type
/// ID certificate (its UID is the order type); a dead token is cleaned up as
/// for passes.
@Suite(.serialized) struct OrderPushEndToEndTests {
    @Test func anOrderChangePushesOnceOnTheOrderTypesTopicWithItsCertificate() async throws {
        let (mock, apns) = try await PushEndToEndTests.startMock()
        defer { Task { try? await mock.shutdown() } }
        let built = try await BuiltProject.make(passCount: 1, orders: ["O-1001", "O-1002", "O-1003"])
        built.environment.merge(apns) { _, new in new }
        let server = try await ServerProcess(built)
        let client = Client(base: server.base)
        let orderType = built.orderType
        let tokenA = PushEndToEndTests.token("a1")
        let tokenB = PushEndToEndTests.token("b2")
        let tokenC = PushEndToEndTests.token("c3")
        // devA holds O-1001 and O-1002 (one token, two changing orders) and the pass; devB O-1003, which does not
        // change; devC O-1002, and its token is dead.
        for (device, order, pushToken) in [
            ("devA", "O-1001", tokenA), ("devA", "O-1002", tokenA), ("devB", "O-1003", tokenB),
            ("devC", "O-1002", tokenC),
        ] {
            #expect(
                try await client.registerOrder(
                    device, orderType, order, token: try await built.orderToken(order), pushToken: pushToken
                ).status == 201)
        }
        #expect(
            try await client.register(
                "devA", built.type, "C-0000", token: try await built.token("C-0000"), pushToken: tokenA
            ).status == 201)
        await server.stop()
        // The first run knows no cursor: every holder is told once per topic.
        let first = try await built.project.passforge(["push"], environment: built.environment)
        #expect(first.status == 0, "\(first.output)")
        let baseline = mock.requests.count

        // Two orders move on; the pass and O-1003 stay.
        mock.enqueue([.unregistered(timestamp: Date().addingTimeInterval(3600))], forToken: tokenC)
        built.project.writeOrder("O-1001", status: "completed", shipping: "delivered")
        built.project.writeOrder("O-1002", status: "open", shipping: "outForDelivery")
        let run = try await built.project.passforge(["build", "--push"], environment: built.environment)
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.stdout.contains("pushed: sent 2, succeeded 1, removed tokens 1 (1 device), retried 0, failed 0"),
            "\(run.output)")

        let pushes = PushEndToEndTests.requests(mock, after: baseline)
        #expect(
            pushes.compactMap(\.token).sorted() == [tokenA, tokenC], "one push per token: devA's two orders make one")
        for push in pushes {
            let headers = Dictionary(push.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(headers["apns-topic"] == orderType)
            #expect(push.clientSubjectFields["UID"] == orderType, "the Order Type ID certificate")
            #expect(push.body == Array("{}".utf8))
            #expect(headers["apns-push-type"] == "background")
        }
        // The dead token's registration and index file are gone; the others stay.
        #expect(try await built.sql("SELECT COUNT(*) FROM devices WHERE library_identifier = 'devC'") == "0")
        #expect(built.fileBytes(TreeLayout.deviceIndexPath(device: "devC", type: orderType)) == nil)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "4")
        #expect(try await built.sql("SELECT COUNT(*) FROM push_queue") == "0")

        // Nothing changed since: the next run sends nothing.
        let again = try await built.project.passforge(["push"], environment: built.environment)
        #expect(again.status == 0, "\(again.output)")
        #expect(mock.requests.count == baseline + pushes.count)
    }
}
