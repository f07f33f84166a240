import AtomicFiles
import Foundation
package import Hummingbird
package import Logging
import NIOCore
import NIOHTTP1
import PassModel
import PassOffers
package import RegistrationStore
import WalletTree

/// Apple's pass web service ("Adding a Web Service to Update Passes") and
/// order web service ("Wallet Orders": the same five calls under `AppleOrder`)
/// over the output tree and the registration store: the final responder of
/// `passforge serve`. A pass and an order go through the same handlers; what
/// differs (folder, scheme, MIME type, query and index keys) is the item's
/// `WalletItemKind`.
///
/// Its routes (`PassWebService+Routes.swift`) go on Hummingbird's router, one
/// `RouteCollection` per API; every parameter is checked against its strict
/// pattern (400, 404) before a handler sees it, and every answer is given
/// without throwing: a 4xx is a short JSON error, and a 5xx happens only
/// when the disk or the database fails.
package struct PassWebService: Sendable {
    package typealias Context = PassRequestContext

    package struct Limits: Sendable {
        /// `{"pushToken": "…"}` is well under 1 KiB.
        package var registrationBody = 4 * 1024
        /// `{"logs": […]}`.
        package var logBody = 64 * 1024
        /// Log messages kept per request; the rest are counted, not kept.
        package var logEntriesPerRequest = 100
        /// Characters kept of one log message.
        package var logMessageLength = 1024
        /// Bytes of device log lines per minute written to the server's log, per client and in total.
        package var logBytesPerClientPerMinute = 32 * 1024
        package var logBytesPerMinute = 256 * 1024

        package init() {}
    }

    let store: any RegistrationStore & DeviceLog
    let tree: PublishedTree
    let indexWriter: DeviceIndexWriter
    /// Used instead of `indexWriter` when other servers share the store.
    let sharedIndexWriter: SharedDeviceIndexWriter
    let basePath: String
    let limits: Limits
    let logger: Logger
    let logBudget: DeviceLogBudget
    /// Nil when registrations are not limited.
    let registrationLimiter: RateLimiter?
    let metrics: ServerMetrics
    /// DeviceCheck offers' claim call; nil when passforge.yml defines no offers.
    let offers: OfferClaimEndpoint?
    /// `.store`: no index files are written; the lists are answered from the store.
    let deviceLists: DeviceListSource

    package init(
        store: any RegistrationStore & DeviceLog, tree: PublishedTree, basePath: String, limits: Limits = Limits(),
        registrationsPerMinute: Int = 0, metrics: ServerMetrics = ServerMetrics(), offers: OfferClaimEndpoint? = nil,
        deviceLists: DeviceListSource = .files, logger: Logger
    ) {
        self.store = store
        self.tree = tree
        // The process's one index writer (`OutputFolder`): `serve --push`'s dead-token cleanup writes through it too.
        let files = tree.output.indexFiles
        self.indexWriter = DeviceIndexWriter(files: files)
        self.sharedIndexWriter = SharedDeviceIndexWriter(files: files, store: store)
        self.basePath = Route.normalizeBasePath(basePath)
        self.limits = limits
        self.logger = logger
        self.logBudget = DeviceLogBudget(
            bytesPerClient: limits.logBytesPerClientPerMinute, bytesInTotal: limits.logBytesPerMinute)
        self.registrationLimiter = registrationsPerMinute > 0 ? RateLimiter(perMinute: registrationsPerMinute) : nil
        self.metrics = metrics
        self.offers = offers
        self.deviceLists = deviceLists
    }

    // MARK: Passes and orders

    /// Apple "Send an Updated Pass" and "Retrieve the latest version of an
    /// order": 200 with the signed file, 304 when the device has it, 401 unless
    /// the token is the item's under its kind's scheme — also when there is no
    /// such item, or the path's kind is not the item's.
    func itemResponse(_ request: Request, kind: WalletItemKind, type: String, identifier: String) async throws
        -> Response
    {
        let known = tree.current().item(type: type, identifier: identifier).flatMap {
            $0.record.kind == kind ? $0 : nil
        }
        guard Self.isAuthorized(request, kind: kind, tokenDigest: known?.tokenDigest), let item = known else {
            throw APIError.unauthorized(kind)
        }
        return try await fileResponse(request, pass: item, path: item.record.path, cacheControl: "private, no-cache")
    }

    /// Add-to-Wallet links: the same bytes without Authorization (a link in a
    /// web page or an email carries no header), at an unguessable (or
    /// deliberately public) path the build state lists.
    func downloadResponse(_ request: Request, path: String) async throws -> Response {
        if path.hasSuffix(".pkpasses") { return try await bundleResponse(request, path: path) }
        if LandingPageResponse.isLandingFile(String(TreeLayout.fileName(of: path))) {
            return try await landingResponse(request, path: path)
        }
        let snapshot = tree.current()
        guard let key = snapshot.downloads[path], let pass = snapshot.items[key] else { throw APIError.notFound }
        return try await fileResponse(request, pass: pass, path: path, cacheControl: "no-cache")
    }

    private func fileResponse(_ request: Request, pass: PublishedTree.Item, path: String, cacheControl: String)
        async throws -> Response
    {
        var headers: HTTPFields = [
            .contentType: pass.record.kind.mediaType,
            .cacheControl: cacheControl,
        ]
        // Answered from the committed state alone: no file is read for a 304.
        if ConditionalRequest.isNotModified(
            ifNoneMatch: request.headers[values: .ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince],
            etag: pass.record.etag, lastModified: pass.lastModified)
        {
            headers[.eTag] = pass.record.etag
            headers[.lastModified] = pass.lastModifiedHTTPDate
            return Self.notModified(headers)
        }
        guard let representation = try await tree.representation(of: path) else {
            // Removed by a build that has not committed its state yet.
            throw APIError(.notFound, "the \(pass.record.kind.noun) is being rebuilt; try again")
        }
        headers[.eTag] = representation.etag
        if representation.etag == pass.record.etag {
            headers[.lastModified] = pass.lastModifiedHTTPDate
        }
        // Otherwise a build has replaced the file and the watcher has not installed its state yet:
        // the ETag (from these very bytes) is right, a date is not known.
        headers[.contentLength] = String(representation.bytes.readableBytes)
        // The cached buffer itself: the body shares its storage, no byte is copied.
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: representation.bytes))
    }

    // MARK: Registrations

    /// Apple "Register a Pass for Update Notifications" (and "Register a device
    /// for update notifications" of an order, the same path): 201 when new, 200
    /// when already registered (the push token replaced if it changed), 401.
    func register(_ request: inout Request, client: String, device: String, type: String, serial: String) async throws
        -> Response
    {
        let snapshot = try authorize(request, type: type, serial: serial)
        // One valid token (a public pass's is public) could otherwise register any number of devices.
        if let registrationLimiter, !registrationLimiter.allow(client) {
            throw APIError(
                .tooManyRequests, "too many registrations from this address; try again later",
                headers: [.retryAfter: "60"])
        }
        let body = try await collectBody(
            &request, limit: limits.registrationBody, route: "registration", client: client)
        let pushToken = try PushTokenBody.pushToken(from: body)
        let change = try await store.register(
            device: device, pushToken: pushToken, passTypeIdentifier: type, serialNumber: serial)
        metrics.recordRegistrationChange(change.outcome)
        await countInstall(change.outcome, type: type, serial: serial)
        if change.outcome.changesIndex { await writeIndex(change, snapshot: snapshot) }
        if change.outcome == .pushTokenReplaced {
            logger.info("push token replaced", metadata: ["device": "\(LogRedaction.device(device))"])
        }
        return Self.empty(change.outcome == .created ? .created : .ok)
    }

    /// Apple "Unregister a Pass for Update Notifications" (and of an order): 200,
    /// also when there was no such registration; 401.
    func unregister(_ request: Request, device: String, type: String, serial: String) async throws -> Response {
        // A pass removed from the content can still be unregistered: the device keeps it until its owner deletes it.
        let snapshot = try authorize(request, type: type, serial: serial, acceptingRemovedPasses: true)
        let change = try await store.unregister(device: device, passTypeIdentifier: type, serialNumber: serial)
        metrics.recordRegistrationChange(change.outcome)
        await countInstall(change.outcome, type: type, serial: serial)
        if change.outcome.changesIndex { await writeIndex(change, snapshot: snapshot) }
        return Self.empty(.ok)
    }

    /// The token must be the one of the item named in the path, under its kind's scheme. A refusal is
    /// the 401 of the path's type identifier's kind (an order type's path is an order path: its 401 names
    /// `AppleOrder`, whatever the request sent); for a type no build has, the scheme the request used
    /// (`ApplePass` when none). Every item of a type has the type's kind, so the 401 says nothing about the item.
    private func authorize(_ request: Request, type: String, serial: String, acceptingRemovedPasses: Bool = false)
        throws -> PublishedTree.Snapshot
    {
        let snapshot = tree.current()
        var expected = snapshot.item(type: type, identifier: serial).map {
            (kind: $0.record.kind, digest: $0.tokenDigest)
        }
        if expected == nil, acceptingRemovedPasses { expected = snapshot.removedItem(type: type, identifier: serial) }
        // An unknown item is compared too (against nothing): its refusal costs what a wrong token's does.
        guard Self.isAuthorized(request, kind: expected?.kind ?? .pass, tokenDigest: expected?.digest), expected != nil
        else {
            let scheme =
                snapshot.typeKinds[type]
                ?? PassAuthentication.credentials(fromAuthorization: request.headers[.authorization])?.scheme ?? .pass
            throw APIError.unauthorized(scheme)
        }
        return snapshot
    }

    /// Whether the Authorization header holds `kind`'s scheme and a token hashing to `tokenDigest`.
    /// A well-formed token is hashed and compared whatever the scheme (against nothing when the scheme
    /// is another kind's, or there is no digest), so the time taken tells nothing.
    static func isAuthorized(_ request: Request, kind: WalletItemKind, tokenDigest: [UInt8]?) -> Bool {
        guard let credentials = PassAuthentication.credentials(fromAuthorization: request.headers[.authorization])
        else { return false }
        return PassAuthentication.verify(credentials.token, expected: credentials.scheme == kind ? tokenDigest : nil)
    }

    /// The index file follows the database, before the device gets its
    /// answer. The registration is already durable, so a failed write is
    /// logged, not answered: the next change of that index, or the next
    /// build, writes it again.
    private func writeIndex(_ change: RegistrationChange, snapshot: PublishedTree.Snapshot) async {
        guard deviceLists == .files else { return }
        do {
            if store.isShared {
                try await sharedIndexWriter.write(change.index, snapshot: snapshot)
            } else {
                try await indexWriter.write(change, snapshot: snapshot)
            }
        } catch {
            logger.error(
                "cannot write the index of a device: \(error)",
                metadata: [
                    "device": "\(LogRedaction.device(change.index.device))",
                    "passType": "\(change.index.passTypeIdentifier)",
                ])
        }
    }

    /// Apple "Get the List of Updatable Passes" (and "Retrieve the registrations
    /// for a device" of an order type): the items whose update tag is greater
    /// than `passesUpdatedSince` (`ordersModifiedSince` for orders; all when it
    /// is missing or not a number), with `lastUpdated` (`lastModified`) the
    /// greatest tag among them; 204 when none.
    func serialNumbers(_ request: Request, device: String, type: String) async throws -> Response {
        let registered = try await store.serialNumbers(device: device, passTypeIdentifier: type)
        let snapshot = tree.current()
        var serials: [String] = []
        var lastUpdated = Int64.min
        var kind: WalletItemKind?
        var since: Int64?
        for serial in registered {
            guard let item = snapshot.updateTag(type: type, serial: serial) else { continue }
            if kind == nil {
                // A type identifier names passes or orders, never both (the build refuses it): its
                // first item tells which query parameter counts.
                kind = item.kind
                since = UpdateTag.parse(request.uri.queryParameters[Substring(item.kind.updatedSinceParameter)])
            }
            guard since.map({ item.tag > $0 }) ?? true else { continue }
            serials.append(serial)
            lastUpdated = max(lastUpdated, item.tag)
        }
        guard !serials.isEmpty else { return Self.empty(.noContent) }
        let body = UpdatableItemsBody(kind: kind ?? .pass, identifiers: serials, lastUpdated: lastUpdated).encoded()
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "no-store", .contentLength: String(body.count)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    // MARK: Log, health

    /// Apple "Log a Message": each message becomes one server log line and a
    /// row of the bounded log table; 200.
    func log(_ request: inout Request, client: String) async throws -> Response {
        let body = try await collectBody(&request, limit: limits.logBody, route: "log", client: client)
        let messages = try LogEntriesBody.messages(from: body)
        let kept = messages.prefix(limits.logEntriesPerRequest).map {
            LogRedaction.message($0, limit: limits.logMessageLength)
        }
        let budget = logBudget.admit(client: client, messageSizes: kept.map { $0.utf8.count })
        metrics.recordDeviceLog(received: messages.count, suppressed: kept.count - budget.loggedCount)
        if let earlier = budget.suppressedEarlier {
            logger.notice(
                "device log: suppressed \(earlier.messages) messages (\(earlier.bytes) bytes) in the previous minute; all are in the log table"
            )
        }
        for message in kept.prefix(budget.loggedCount) {
            logger.notice("device log: \(message)")
        }
        if budget.announceExhausted {
            logger.notice(
                "device log: budget of this minute spent (client \(client)); further messages are kept in the log table but not logged"
            )
        }
        if messages.count > kept.count {
            logger.notice("device log: \(messages.count - kept.count) more messages dropped")
        }
        try await store.appendLog(Array(kept), receivedAt: Date().timeIntervalSince1970)
        return Self.empty(.ok)
    }

    func health() -> Response {
        let snapshot = tree.current()
        // With offers, whether Apple accepts the DeviceCheck key: "misconfigured" needs an operator.
        let deviceCheck = offers.map { #","deviceCheck":"\#($0.healthStatus)""# } ?? ""
        let body = ByteBuffer(
            string: #"{"status":"ok","passes":\#(snapshot.passCount),"orders":\#(snapshot.orderCount)\#(deviceCheck)}"#
                + "\n")
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: body))
    }

    /// Prometheus' text format: the request counters, the store's and the tree's gauges.
    func metricsResponse() async -> Response {
        offers?.recordStatus(in: metrics)
        let body = await metrics.exposition(store: store, tree: tree.current())
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    // MARK: Helpers

    /// The body, or the 4xx that says why not. Every failure here is the
    /// client's: too large, malformed (bad chunked encoding, an unknown
    /// Transfer-Encoding), too slow, or abandoned half-way.
    func collectBody(_ request: inout Request, limit: Int, route: String, client: String) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.contentTooLarge(limit: limit)
        }
        do {
            return try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.contentTooLarge(limit: limit)
        } catch is RequestReadTimeout {
            logger.notice(
                "\(route): client error: request body not received in time", metadata: ["client": "\(client)"])
            throw APIError.requestTimeout
        } catch let error as HTTPParserError {
            let reason =
                error == .invalidEOFState
                ? "client closed the connection before the end of the body" : "malformed body (\(error))"
            logger.notice("\(route): client error: \(reason)", metadata: ["client": "\(client)"])
            throw APIError.malformedBody
        } catch {
            logger.notice(
                "\(route): client error: request body abandoned (\(error))", metadata: ["client": "\(client)"])
            throw APIError.malformedBody
        }
    }

    static func empty(_ status: HTTPResponse.Status) -> Response {
        var response = Response(status: status)
        // RFC 9110 §8.6: no Content-Length in a 204.
        if status == .noContent { response.headers[.contentLength] = nil }
        return response
    }

    /// RFC 9110 §15.4.5: a 304 carries the validators, and no body.
    static func notModified(_ headers: HTTPFields) -> Response {
        var response = Response(status: .notModified, headers: headers)
        response.headers[.contentLength] = nil
        response.headers[.contentType] = nil
        return response
    }

    /// HEAD: the GET answer's status and headers (Content-Length included), no body.
    static func headResponse(_ response: Response) -> Response {
        Response(status: response.status, headers: response.headers, body: ResponseBody())
    }
}

/// `passesUpdatedSince` (`ordersModifiedSince`): a decimal tag; anything else means "all of them".
enum UpdateTag {
    static func parse(_ value: Substring?) -> Int64? {
        guard let value, !value.isEmpty, value.utf8.count <= 40 else { return nil }
        if let number = Int64(value) { return number }
        // All digits but beyond Int64: later than any tag.
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) { return Int64.max }
        return nil
    }
}

/// Apple's PushToken object: `{"pushToken": "<hex>"}`.
enum PushTokenBody {
    private struct Body: Decodable { var pushToken: String? }

    static func pushToken(from buffer: ByteBuffer) throws -> String {
        guard buffer.readableBytes > 0 else { throw APIError.badRequest("empty body; send {\"pushToken\": \"<hex>\"}") }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest("body is not a JSON object; send {\"pushToken\": \"<hex>\"}")
        }
        guard let token = body.pushToken, !token.isEmpty else {
            throw APIError.badRequest("pushToken is missing or empty")
        }
        guard PathRules.isPushToken(token) else {
            throw APIError.badRequest("pushToken is not a device token: an even number of hex digits, 32 to 400")
        }
        return token.lowercased()
    }
}

/// Apple's LogEntries object: `{"logs": ["…", …]}`.
enum LogEntriesBody {
    static func messages(from buffer: ByteBuffer) throws -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any],
            let logs = object["logs"] as? [Any]
        else {
            throw APIError.badRequest("body must be {\"logs\": [\"message\", …]}")
        }
        return logs.compactMap { $0 as? String }
    }
}
