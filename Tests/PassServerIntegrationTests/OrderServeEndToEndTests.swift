import Foundation
import NIOHTTP1
import PassServer
import TestSupport
import Testing
import WalletTree

/// Apple's order web service ("Wallet Orders": register, unregister, the
/// updatable list with `ordersModifiedSince`, the latest order, log) from the
/// real `passforge serve` on loopback, every status code, over a tree the
/// real `passforge build` made with passes and signed orders. The passes'
/// calls go through the same handlers; the scheme must match the item's kind.
@Suite(.serialized) struct OrderServeEndToEndTests {
    static let orderMediaType = "application/vnd.apple.finance.order"

    @Test func everyOrderCallAnswersAsAppleSpecifies() async throws {
        let built = try await BuiltProject.make(passCount: 1, orders: ["O-1001", "O-1002"])
        let server = try await ServerProcess(built)
        defer { server.terminate() }
        let client = Client(base: server.base)
        let type = built.orderType
        let device = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
        let token1 = try await built.orderToken("O-1001")
        let token2 = try await built.orderToken("O-1002")
        let passToken = try await built.token("C-0000")

        // Register: 201 new, 200 already registered.
        #expect(
            try await client.registerOrder(device, type, "O-1001", token: token1, pushToken: ServeEndToEndTests.pushA)
                .status == 201)
        #expect(
            try await client.registerOrder(device, type, "O-1001", token: token1, pushToken: ServeEndToEndTests.pushA)
                .status == 200)
        #expect(
            try await client.registerOrder(device, type, "O-1002", token: token2, pushToken: ServeEndToEndTests.pushA)
                .status == 201)
        // 401: another order's token, no token, an unknown order, the pass scheme on an order, an order's token on a pass.
        let refusedRegistrations: [Client.Answer] = [
            try await client.registerOrder(device, type, "O-1001", token: token2, pushToken: ServeEndToEndTests.pushA),
            try await client.send(
                .POST, "/v1/devices/\(device)/registrations/\(type)/O-1001",
                headers: ["Content-Type": "application/json"],
                body: Array(#"{"pushToken":"\#(ServeEndToEndTests.pushA)"}"#.utf8)),
            try await client.registerOrder(device, type, "O-9999", token: token1, pushToken: ServeEndToEndTests.pushA),
            try await client.registerOrder(
                device, type, "O-1001", token: token1, pushToken: ServeEndToEndTests.pushA, scheme: "ApplePass"),
            try await client.registerOrder(
                device, built.type, "C-0000", token: passToken, pushToken: ServeEndToEndTests.pushA),
        ]
        for (number, answer) in refusedRegistrations.enumerated() {
            #expect(answer.status == 401, "refusal \(number)")
        }
        // On an order type's path every refusal is the order's 401, whatever the request sent and whether the
        // order exists or not (issue 31: without a token, or with ApplePass, it named ApplePass); a pass's is the pass's.
        for answer in refusedRegistrations.prefix(4) {
            #expect(answer.body == refusedRegistrations[0].body)
            #expect(answer.header("WWW-Authenticate") == "AppleOrder")
            #expect(answer.text.contains("AppleOrder") && !answer.text.contains("ApplePass"), "\(answer.text)")
        }
        #expect(refusedRegistrations[4].header("WWW-Authenticate") == "ApplePass")
        // The scheme word is matched exactly, as nginx and Caddy match it: lower case is a 401.
        let lowerCase = try await client.registerOrder(
            device, type, "O-1001", token: token1, pushToken: ServeEndToEndTests.pushA,
            scheme: "appleorder")
        #expect(lowerCase.status == 401 && lowerCase.body == refusedRegistrations[0].body)
        let lowerCaseGet = try await client.send(
            .GET, "/v1/orders/\(type)/O-1001", headers: ["Authorization": "appleorder \(token1)"])
        #expect(lowerCaseGet.status == 401 && lowerCaseGet.header("WWW-Authenticate") == "AppleOrder")
        #expect(
            try await client.pass(
                built.type, "C-0000", token: nil, headers: ["Authorization": "applepass \(passToken)"]
            ).status == 401)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "2")

        // The updatable list: Apple's OrderIdentifiers keys; ordersModifiedSince filters, passesUpdatedSince does not.
        let record1 = try built.orderRecord("O-1001")
        let record2 = try built.orderRecord("O-1002")
        let list = try await client.orderIdentifiers(device, type)
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.json?["orderIdentifiers"] as? [String] == ["O-1001", "O-1002"])
        #expect(list.json?["serialNumbers"] == nil && list.json?["lastUpdated"] == nil)
        let lastModified = try #require(list.json?["lastModified"] as? String)
        #expect(lastModified == String(max(record1.updateTag, record2.updateTag)))
        #expect(try await client.orderIdentifiers(device, type, since: lastModified).status == 204)
        #expect(
            try await client.orderIdentifiers(device, type, since: String(record1.updateTag - 1)).json?[
                "orderIdentifiers"] as? [String] == ["O-1001", "O-1002"])
        #expect(try await client.serials(device, type, since: lastModified).status == 200)
        #expect(try await client.orderIdentifiers("ffff0000", type).status == 204)
        // The index file a static host serves says the same.
        #expect(
            built.fileBytes(TreeLayout.deviceIndexPath(device: device, type: type)).map {
                String(decoding: $0, as: UTF8.self)
            } == list.text)

        // The latest order: 200 with its bytes, the order type, ETag and Last-Modified.
        let fetched = try await client.order(type, "O-1001", token: token1)
        #expect(fetched.status == 200)
        #expect(fetched.body == built.fileBytes(record1.path))
        #expect(record1.path == "v1/orders/\(type)/O-1001")
        #expect(fetched.header("Content-Type") == Self.orderMediaType)
        #expect(fetched.header("ETag") == record1.etag)
        let modified = try #require(fetched.header("Last-Modified"))
        #expect(modified == HTTPDate.format(record1.updateTag / 1000))
        let head = try await client.send(
            .HEAD, "/v1/orders/\(type)/O-1001", headers: ["Authorization": "AppleOrder \(token1)"])
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(record1.size))
        // 304 by If-None-Match and by If-Modified-Since; not for another ETag or an older date.
        let byETag = try await client.order(type, "O-1001", token: token1, headers: ["If-None-Match": record1.etag])
        #expect(byETag.status == 304 && byETag.body.isEmpty && byETag.header("ETag") == record1.etag)
        #expect(
            try await client.order(type, "O-1001", token: token1, headers: ["If-Modified-Since": modified]).status
                == 304)
        #expect(
            try await client.order(type, "O-1001", token: token1, headers: ["If-None-Match": "\"nope\""]).status == 200)
        #expect(
            try await client.order(
                type, "O-1001", token: token1, headers: ["If-Modified-Since": "Thu, 01 Jan 2015 00:00:00 GMT"]
            ).status == 200)

        // The same 401 for a wrong token, a missing token and an unknown order, and for a scheme or path of the other kind.
        let reference = try await client.order(type, "O-1001", token: nil)
        #expect(reference.status == 401)
        #expect(reference.header("WWW-Authenticate") == "AppleOrder")
        #expect(reference.text.contains("AppleOrder"))
        let refusals: [(String, [String: String])] = [
            ("/v1/orders/\(type)/O-1001", ["Authorization": "AppleOrder \(token2)"]),
            ("/v1/orders/\(type)/O-1001", ["Authorization": "AppleOrder not-the-token-at-all"]),
            ("/v1/orders/\(type)/O-1001", ["Authorization": "ApplePass \(token1)"]),
            ("/v1/orders/\(type)/O-1001", ["Authorization": "AppleOrder \(token1) x"]),
            ("/v1/orders/\(type)/O-9999", ["Authorization": "AppleOrder \(token1)"]),
            ("/v1/orders/other.order.type/O-1001", ["Authorization": "AppleOrder \(token1)"]),
            // A pass is not an order, under either scheme.
            ("/v1/orders/\(built.type)/C-0000", ["Authorization": "AppleOrder \(passToken)"]),
            ("/v1/orders/\(built.type)/C-0000", ["Authorization": "ApplePass \(passToken)"]),
        ]
        for (path, headers) in refusals {
            let answer = try await client.send(.GET, path, headers: headers)
            #expect(answer.status == 401, "\(path) \(headers)")
            #expect(answer.body == reference.body, "\(path) \(headers)")
        }
        // And an order is not a pass: the pass URL refuses it with the pass's 401.
        for scheme in ["AppleOrder", "ApplePass"] {
            let answer = try await client.send(
                .GET, "/v1/passes/\(type)/O-1001", headers: ["Authorization": "\(scheme) \(token1)"])
            #expect(answer.status == 401, "\(scheme)")
            #expect(answer.header("WWW-Authenticate") == "ApplePass")
        }
        #expect(try await client.pass(built.type, "C-0000", token: passToken).status == 200)

        // The Add-to-Wallet link: no token, the order's type.
        let download = try await client.send(.GET, "/" + record1.downloadPath)
        #expect(record1.downloadPath.hasSuffix(".order"))
        #expect(download.status == 200)
        #expect(download.header("Content-Type") == Self.orderMediaType)
        #expect(download.body == fetched.body)

        // The order changes: the list names it after the old lastModified, the device gets the new bytes, then 304.
        built.project.writeOrder("O-1001", status: "completed", shipping: "delivered")
        try await built.build()
        let changed = try await eventually {
            try await client.orderIdentifiers(device, type, since: lastModified).status == 200
        }
        #expect(changed)
        let newer = try await client.orderIdentifiers(device, type, since: lastModified)
        #expect(newer.json?["orderIdentifiers"] as? [String] == ["O-1001"])
        let updated = try await client.order(type, "O-1001", token: token1, headers: ["If-None-Match": record1.etag])
        #expect(updated.status == 200)
        #expect(updated.body != fetched.body)
        let newETag = try #require(updated.header("ETag"))
        #expect(
            try await client.order(type, "O-1001", token: token1, headers: ["If-None-Match": newETag]).status == 304)

        // Unregister: 200, also when not registered; 401 for a wrong token or scheme.
        #expect(try await client.unregisterOrder(device, type, "O-1002", token: token1).status == 401)
        #expect(
            try await client.unregisterOrder(device, type, "O-1002", token: token2, scheme: "ApplePass").status == 401)
        #expect(try await client.unregisterOrder(device, type, "O-1002", token: token2).status == 200)
        #expect(try await client.unregisterOrder(device, type, "O-1002", token: token2).status == 200)
        #expect(try await client.orderIdentifiers(device, type).json?["orderIdentifiers"] as? [String] == ["O-1001"])
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "1")

        // Bad input: 400 and 405, never stored.
        #expect(
            try await client.send(
                .POST, "/v1/devices/\(device)/registrations/\(type)/O-1002",
                headers: ["Authorization": "AppleOrder \(token2)"], body: Array("{}".utf8)
            ).status == 400)
        #expect(try await client.send(.GET, "/v1/orders/\(type)/..").status == 400)
        #expect(
            try await client.send(
                .DELETE, "/v1/orders/\(type)/O-1001", headers: ["Authorization": "AppleOrder \(token1)"]
            ).status == 405)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "1")

        // Log, health (passes and orders counted apart), the route metrics.
        #expect(
            try await client.send(
                .POST, "/v1/log", headers: ["Content-Type": "application/json"],
                body: Array(#"{"logs":["order log line"]}"#.utf8)
            ).status == 200)
        let health = try await client.send(.GET, "/health")
        #expect(health.json?["passes"] as? Int == 1)
        #expect(health.json?["orders"] as? Int == 2)
        let metrics = try await client.send(.GET, "/metrics").text
        #expect(metrics.contains(#"route="order""#))
        #expect(metrics.contains("passforge_orders 2"))
        #expect(!server.stdout.get().contains(token1) && !server.stderr.get().contains(token1))

        // An order removed from the content: 401 for its GET, yet its holder can still unregister it, with its own scheme.
        try FileManager.default.removeItem(atPath: built.project.directory.file("content/orders/O-1001.yml"))
        try await built.build()
        let gone = try await eventually { try await client.order(type, "O-1001", token: token1).status == 401 }
        #expect(gone)
        #expect(
            try await client.unregisterOrder(device, type, "O-1001", token: token1, scheme: "ApplePass").status == 401)
        #expect(try await client.unregisterOrder(device, type, "O-1001", token: token2).status == 401)
        #expect(try await client.unregisterOrder(device, type, "O-1001", token: token1).status == 200)
        #expect(try await built.sql("SELECT COUNT(*) FROM registrations") == "0")
    }
}
