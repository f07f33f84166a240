import Crypto
import Foundation
import NIOHTTP1
import PassModel
import WalletTree
import TestSupport

/// Orders put into a tree the real build made, with the names, links, records
/// and file times the build gives an order (`v1/orders/<type>/<id>`, its
/// `by-token/` and `download/<capability>.order` hard links, a record of kind
/// order in the committed state). The server and the static hosts only read
/// that, so they are tested on orders without the content format.
// `@unchecked`: one test owns it.
final class HandmadeOrders: @unchecked Sendable {
    static let type = "order.com.example.test"

    struct Order {
        var identifier: String
        var token: String
        var record: BuildState.ItemRecord
    }

    let built: BuiltProject
    private(set) var orders: [String: Order] = [:]

    init(_ built: BuiltProject) { self.built = built }

    /// Adds (or replaces) orders with `status`, each with a new update tag after every tag of the state,
    /// and commits the state with a rename, as a build does.
    @discardableResult
    func put(_ identifiers: [String], status: String = "open") throws -> [Order] {
        var state = try built.buildState()
        var added: [Order] = []
        for identifier in identifiers {
            let token = orders[identifier]?.token ?? Self.randomToken()
            let key = "\(Self.type)/\(identifier)"
            if let old = state.passes[key] {
                for file in old.files { try? FileManager.default.removeItem(atPath: "\(built.output)/\(file)") }
            }
            let tag = max(state.lastUpdateTag + 1, Int64(Date().timeIntervalSince1970 * 1000))
            state.lastUpdateTag = tag
            let bytes = Self.orderPackage(identifier: identifier, token: token, status: status, tag: tag)
            let capability = String(Self.base64URL(Array(SHA256.hash(data: Array("download/\(key)".utf8)))).prefix(22))
            let path = TreeLayout.itemPath(kind: .order, type: Self.type, identifier: identifier)
            let tokenPath = TreeLayout.tokenPath(type: Self.type, identifier: identifier, token: token)
            let downloadPath = TreeLayout.capabilityDownloadPath(capability: capability, kind: .order)
            try write(bytes, at: path, linkedAt: [tokenPath, downloadPath], updateTag: tag)
            let record = BuildState.ItemRecord(
                passTypeIdentifier: Self.type, serialNumber: identifier, teamIdentifier: TestPKI.team, updateTag: tag,
                etag: BuildState.etag(of: bytes), size: bytes.count, tokenHash: Self.sha256Hex(Array(token.utf8)),
                fingerprint: Self.sha256Hex(bytes), definitionHash: Self.sha256Hex(Array(identifier.utf8)), templateName: "order",
                imagePaths: [], sourceFile: "content/orders.yml", downloadPath: downloadPath, tokenPath: tokenPath, kind: .order)
            state.passes[key] = record
            let order = Order(identifier: identifier, token: token, record: record)
            orders[identifier] = order
            added.append(order)
        }
        try Data(try state.encoded()).write(to: URL(fileURLWithPath: BuildState.path(in: built.output)), options: .atomic)
        return added
    }

    func token(_ identifier: String) throws -> String {
        guard let order = orders[identifier] else { throw HarnessError("no order \(identifier)") }
        return order.token
    }

    func record(_ identifier: String) throws -> BuildState.ItemRecord {
        guard let record = try built.buildState().passes["\(Self.type)/\(identifier)"], record.kind == .order else {
            throw HarnessError("no order \(identifier) in the state")
        }
        return record
    }

    /// The bytes at `path` and hard links to them, with the update tag's time as mtime (as the build
    /// sets it: a static host's Last-Modified is then the service's).
    private func write(_ bytes: [UInt8], at path: String, linkedAt links: [String], updateTag: Int64) throws {
        let full = "\(built.output)/\(path)"
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: TimeInterval(updateTag / 1000))],
                                              ofItemAtPath: full)
        for link in links {
            let target = "\(built.output)/\(link)"
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.linkItem(atPath: full, toPath: target)
        }
    }

    /// A zip with an order.json (unsigned: nothing here reads inside it).
    static func orderPackage(identifier: String, token: String, status: String, tag: Int64) -> [UInt8] {
        let json = #"{"schemaVersion":1,"orderTypeIdentifier":"\#(type)","orderIdentifier":"\#(identifier)","status":"\#(status)","authenticationToken":"\#(token)","updatedAt":"\#(tag)"}"#
        return storedZip([("order.json", Array(json.utf8))])
    }

    static func randomToken() -> String {
        base64URL((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}

extension Client {
    func registerOrder(_ device: String, _ type: String, _ identifier: String, token: String, pushToken: String,
                       scheme: String = "AppleOrder") async throws -> Answer {
        try await send(.POST, "/v1/devices/\(device)/registrations/\(type)/\(identifier)",
                       headers: ["Authorization": "\(scheme) \(token)", "Content-Type": "application/json"],
                       body: Array(#"{"pushToken":"\#(pushToken)"}"#.utf8))
    }

    func unregisterOrder(_ device: String, _ type: String, _ identifier: String, token: String,
                         scheme: String = "AppleOrder") async throws -> Answer {
        try await send(.DELETE, "/v1/devices/\(device)/registrations/\(type)/\(identifier)", headers: ["Authorization": "\(scheme) \(token)"])
    }

    func orderIdentifiers(_ device: String, _ type: String, since: String? = nil) async throws -> Answer {
        try await send(.GET, "/v1/devices/\(device)/registrations/\(type)" + (since.map { "?ordersModifiedSince=\($0)" } ?? ""))
    }

    func order(_ type: String, _ identifier: String, token: String?, scheme: String = "AppleOrder",
               headers: [String: String] = [:]) async throws -> Answer {
        var headers = headers
        if let token { headers["Authorization"] = "\(scheme) \(token)" }
        return try await send(.GET, "/v1/orders/\(type)/\(identifier)", headers: headers)
    }
}
