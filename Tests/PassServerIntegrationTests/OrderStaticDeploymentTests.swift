import Foundation
import MockAPNs
import PassModel
import TestSupport
import Testing
import WalletTree

/// Orders through the static deployment, with real processes: CI builds a
/// project with passes and orders from a fresh clone and publishes it to a
/// folder served by nginx with the shipped config, `passforge serve --output
/// DEST --push` behind it. A device registers for an order through nginx; the
/// order's status changes in a commit; the next CI run publishes it, the
/// server pushes exactly once on the order type's topic with its Order Type ID
/// certificate, and the device gets the new order from nginx, then 304.
@Suite(.serialized) struct OrderStaticDeploymentTests {
    static let device = "0rd3r5d3v1c3"
    static let pushToken = String(repeating: "e8", count: 32)

    @Test func anOrderPublishedByCIIsRegisteredPushedAndFetchedThroughNginx() async throws {
        let d = try await StaticDeployment(.directory, passCount: 1, orders: ["SO-1", "SO-2"])
        defer { d.stop() }
        let orderType = TestPKI.orderType

        // Run 1: the first deploy; the server takes it (a first push run with nobody registered).
        let first = try await d.repository.freshClone("ci-run-1")
        let build = try await first.passforge(["build", "--initial"], environment: d.ci)
        try #require(build.status == 0, "\(build.output)")
        let publish = try await first.passforge(["publish", d.destination], environment: d.ci)
        try #require(publish.status == 0, "\(publish.output)")
        let state1 = try d.publishedState()
        #expect(state1.passes.values.filter { $0.kind == .order }.count == 2)
        let noticed = try await eventually(timeout: 60) {
            try await d.sql("SELECT update_tag FROM push_cursor") == String(state1.lastUpdateTag)
        }
        try #require(noticed, "passforge serve did not take run 1: \(d.serve.output)")

        // A device registers for SO-1 through nginx and fetches it from nginx alone.
        let token = try await d.orderToken("SO-1")
        let registered = try await d.client.registerOrder(
            Self.device, orderType, "SO-1", token: token, pushToken: Self.pushToken)
        #expect(registered.status == 201, "\(registered.text)")
        let index = try await d.client.orderIdentifiers(Self.device, orderType)
        #expect(index.json?["orderIdentifiers"] as? [String] == ["SO-1"])
        let old = try await d.client.order(orderType, "SO-1", token: token)
        #expect(old.status == 200)
        #expect(old.header("Content-Type") == "application/vnd.apple.finance.order")
        let baseline = d.mock.requests.count

        // Run 2: SO-1's status changes; CI signs only it and publishes.
        d.repository.editor.writeOrder("SO-1", status: "completed", shipping: "delivered")
        try await d.repository.commit("SO-1 delivered")
        let (second, rebuild) = try await d.ciBuildFromPublishedState("ci-run-2")
        #expect(rebuild.stdout.contains("built 1, unchanged 2, removed 0"), "\(rebuild.output)")
        let republish = try await second.passforge(["publish", d.destination], environment: d.ci)
        try #require(republish.status == 0, "\(republish.output)")
        let state2 = try d.publishedState()

        // The server's push run for the build is over when its cursor is at the build and nothing is queued.
        let pushRunDone = try await eventually(timeout: 60) {
            let cursor = try await d.sql("SELECT update_tag FROM push_cursor")
            let queued = try await d.sql("SELECT COUNT(*) FROM push_queue")
            return cursor == String(state2.lastUpdateTag) && queued == "0" && !d.pushes(after: baseline).isEmpty
        }
        try #require(pushRunDone, "no push for run 2: \(d.serve.output)")
        let pushes = d.pushes(after: baseline)
        #expect(pushes.count == 1, "exactly one push")
        #expect(pushes.first?.token == Self.pushToken)
        #expect(pushes.first?.outcome == .answered(status: 200))
        #expect(pushes.first.flatMap { push in push.headers.first { $0.name == "apns-topic" }?.value } == orderType)
        #expect(pushes.first?.clientSubjectFields["UID"] == orderType, "pushed with the Order Type ID certificate")

        // The device asks what changed (the index file the server rewrote), then fetches the new order from nginx.
        let tag = String(try #require(state2.passes["\(orderType)/SO-1"]).updateTag)
        let indexed = try await eventually(timeout: 60) {
            try await d.client.orderIdentifiers(Self.device, orderType).json?["lastModified"] as? String == tag
        }
        #expect(indexed, "the device's index does not show SO-1's new tag \(tag)")
        let fetched = try await d.client.order(
            orderType, "SO-1", token: token, headers: ["If-None-Match": old.header("ETag") ?? ""])
        #expect(fetched.status == 200)
        #expect(fetched.body == d.published("v1/orders/\(orderType)/SO-1"))
        #expect(fetched.body != old.body)
        let verified = try await PassVerifier.verifyWithoutBlocking(
            "\(d.destinationPath)/v1/orders/\(orderType)/SO-1", root: TestPKI.shared.root)
        #expect(verified.passJSON["status"] as? String == "completed")
        let etag = try #require(fetched.header("ETag"))
        let lastModified = try #require(fetched.header("Last-Modified"))
        #expect(
            try await d.client.order(orderType, "SO-1", token: token, headers: ["If-None-Match": etag]).status == 304)
        #expect(
            try await d.client.order(orderType, "SO-1", token: token, headers: ["If-Modified-Since": lastModified])
                .status == 304)
        #expect(d.serve.process.isRunning, "\(d.serve.output)")
    }
}
