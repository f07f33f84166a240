import Crypto
import DeviceCheck
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// An in-process stand-in for Apple's DeviceCheck service, for tests and the
/// claims benchmark: HTTPS (HTTP/2 or HTTP/1.1 by ALPN) on 127.0.0.1.
///
/// Like Apple ("Accessing and modifying per-device data") it:
/// - verifies each request's JWT (ES256 signature with the team's public key,
///   `alg`, `kid`, `iss`, and an `iat` at most an hour old): 401 otherwise;
/// - checks the body (`device_token` base64, `transaction_id`, `timestamp` in
///   milliseconds near now): 400 with Apple's live strings otherwise;
/// - keeps two bits per device, and answers a query for a device it has never
///   stored bits for with 200 and the plain text "Bit State Not Found" (Apple's
///   documented string; the live service says "Failed to find bit state",
///   which `notFoundAnswer` can choose).
///
/// A device token here is base64 of `<device>:<anything>`: every token a test
/// makes for one device names the same device, as Apple's ephemeral tokens do.
/// Any other base64 token stands for a device of its own (a fuzzer's).
/// Tests can script the next answers (`failNext`) with any status of Apple's table.
public final class MockDeviceCheckServer: Sendable {
    public struct Request: Sendable, Equatable {
        public var path: String
        public var device: String?
        /// The `device_token` as sent: a test counts each token's uses (Apple's tokens are single-use).
        public var deviceToken: String?
        public var transactionIdentifier: String?
        public var timestamp: Int64?
        /// The JWT's `iat`, when the token verified.
        public var issuedAt: Int64?
        public var status: Int
    }

    /// A scripted answer to the next call (of any kind, or of one path).
    public struct ScriptedAnswer: Sendable {
        public var status: Int
        public var body: String
        public var path: String?
        /// Held this long before answering (a slow or hanging Apple).
        public var delay: Duration
        /// The headers at once, then the body a byte at a time over this long (a trickling server).
        public var trickle: Duration
        /// The Content-Type, when not Apple's (`text/plain` for text).
        public var contentType: String?

        public init(
            status: Int, body: String = "", path: String? = nil, delay: Duration = .zero, trickle: Duration = .zero,
            contentType: String? = nil
        ) {
            self.status = status
            self.body = body
            self.path = path
            self.delay = delay
            self.trickle = trickle
            self.contentType = contentType
        }

        /// Each row of Apple's error table, with the live body where one is known.
        public static let badDeviceToken = ScriptedAnswer(
            status: 400, body: "Missing or incorrectly formatted device token payload")
        public static let badBits = ScriptedAnswer(status: 400, body: "Missing or incorrectly formatted bits")
        public static let badTimestamp = ScriptedAnswer(
            status: 400, body: "Missing or incorrectly formatted time stamp")
        public static let badAuthorizationToken = ScriptedAnswer(
            status: 400, body: "Missing or badly formatted authorization token")
        public static let invalidAuthorizationToken = ScriptedAnswer(
            status: 401, body: "Unable to verify authorization token")
        public static let authorizationTokenExpired = ScriptedAnswer(status: 401, body: "Authorization Token Expired")
        public static let forbidden = ScriptedAnswer(status: 403, body: "Forbidden")
        public static let methodNotAllowed = ScriptedAnswer(status: 405, body: "Method Not Allowed")
        public static let tooManyRequests = ScriptedAnswer(status: 429, body: "Too Many Requests")
        public static let serverError = ScriptedAnswer(status: 500, body: "Server Error")
        public static let serviceUnavailable = ScriptedAnswer(status: 503, body: "Service Unavailable")
    }

    private struct State {
        var bits: [String: (bit0: Bool, bit1: Bool)] = [:]
        var script: [ScriptedAnswer] = []
        var requests: [Request] = []
        var transactions: Set<String> = []
        var recordsRequests = true
        var notFoundAnswer = "Bit State Not Found"
    }

    /// The server's state, shared by its handlers (a `Mutex` cannot be copied into them itself).
    private final class Store: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    public let port: Int
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    private let store: Store
    private let task: Task<Void, any Error>

    /// Starts the server on a free port of 127.0.0.1.
    /// - Parameters:
    ///   - certificateChainPEM/privateKeyPEM: the server's TLS identity (for 127.0.0.1).
    ///   - publicKey: the team's DeviceCheck public key, to verify JWTs.
    ///   - now: seconds since 1970, for the `iat` and `timestamp` checks.
    public init(
        certificateChainPEM: [UInt8], privateKeyPEM: [UInt8], teamIdentifier: String, keyIdentifier: String,
        publicKey: P256.Signing.PublicKey, recordsRequests: Bool = true,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) async throws {
        let store = Store(State(recordsRequests: recordsRequests))
        self.store = store
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(certificateChainPEM).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: privateKeyPEM, format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let verifier = JWTVerifier(
            teamIdentifier: teamIdentifier, keyIdentifier: keyIdentifier, publicKey: publicKey, now: now)
        let router = Router()
        for path in ["/v1/query_two_bits", "/v1/update_two_bits", "/v1/validate_device_token"] {
            router.post(RouterPath(path)) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let answer = Self.answer(
                    path: path, authorization: request.headers[.authorization],
                    body: Data(body.readableBytesView), verifier: verifier, store: store, now: now)
                // A slow Apple, in real time on purpose: the delay and the trickle below are what the deadline
                // tests measure (the client's real request timeout), not a wait for an event.
                if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
                var headers = HTTPFields()
                headers[.contentType] = answer.contentType
                guard answer.trickle > .zero, !answer.text.isEmpty else {
                    return Response(
                        status: .init(code: answer.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: answer.text)))
                }
                let bytes = Array(answer.text.utf8)
                let pause = answer.trickle / bytes.count
                return Response(
                    status: .init(code: answer.status), headers: headers,
                    body: ResponseBody { writer in
                        for byte in bytes {
                            try await Task.sleep(for: pause)
                            try await writer.write(ByteBuffer(bytes: [byte]))
                        }
                        try await writer.finish(nil)
                    })
            }
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "mock-devicecheck"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            // Quiet: a test's shutdown cancels the server, which Hummingbird logs as errors.
            logger: Logger(label: "mock-devicecheck", factory: { _ in SwiftLogNoOpLogHandler() }))
        task = Task(executorPreference: DedicatedExecutor(label: "mock-devicecheck")) {
            try await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    public func shutdown() async {
        task.cancel()
        _ = try? await task.value
    }

    /// The next calls get these answers, in order (one each), before normal service resumes.
    public func failNext(_ answers: ScriptedAnswer...) {
        store.state.withLock { $0.script += answers }
    }

    /// What a query for a device with no bits answers (200, plain text).
    public func answerNotFound(with text: String) {
        store.state.withLock { $0.notFoundAnswer = text }
    }

    /// The bits Apple holds for `device`, nil when never set.
    public func bits(of device: String) -> (bit0: Bool, bit1: Bool)? {
        store.state.withLock { $0.bits[device] }
    }

    public func setBits(of device: String, bit0: Bool, bit1: Bool) {
        store.state.withLock { $0.bits[device] = (bit0, bit1) }
    }

    public var requests: [Request] { store.state.withLock { $0.requests } }

    /// Device tokens that reached this server more than once (Apple calls a token single-use).
    public var tokensSentTwice: [String] {
        var counts: [String: Int] = [:]
        for token in requests.compactMap(\.deviceToken) { counts[token, default: 0] += 1 }
        return counts.filter { $0.value > 1 }.map(\.key)
    }

    /// A device token for `device`, new each call as Apple's are.
    public static func deviceToken(for device: String) -> String {
        Data("\(device):\(UUID().uuidString)".utf8).base64EncodedString()
    }

    private struct Answer {
        var status: Int
        var text: String
        var contentType: String
        var delay: Duration = .zero
        var trickle: Duration = .zero
    }

    private static func answer(
        path: String, authorization: String?, body: Data, verifier: JWTVerifier, store: Store,
        now: @Sendable () -> Int64
    ) -> Answer {
        let issuedAt: Int64?
        let failure: (Int, String)?
        switch verifier.verify(authorization) {
        case .success(let iat):
            issuedAt = iat
            failure = nil
        case .failure(let refusal):
            issuedAt = nil
            failure = (refusal.status, refusal.body)
        }
        let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let token = json?["device_token"] as? String
        // `deviceToken(for:)`'s tokens name their device; any other well-formed token is a device of its own.
        let decoded = token.flatMap { Data(base64Encoded: $0) }
        let device =
            decoded.flatMap { String(data: $0, encoding: .utf8) }.flatMap { text in
                text.contains(":") ? text.split(separator: ":", maxSplits: 1).first.map(String.init) : nil
            } ?? (decoded != nil ? token : nil)
        let transaction = json?["transaction_id"] as? String
        let timestamp = (json?["timestamp"] as? NSNumber)?.int64Value

        return store.state.withLock { state in
            func finish(_ status: Int, _ text: String, json: Bool = false) -> Answer {
                if state.recordsRequests {
                    state.requests.append(
                        Request(
                            path: path, device: device, deviceToken: token, transactionIdentifier: transaction,
                            timestamp: timestamp, issuedAt: issuedAt, status: status))
                }
                return Answer(
                    status: status, text: text, contentType: json ? "application/json" : "text/plain; charset=utf-8")
            }
            if let index = state.script.firstIndex(where: { $0.path == nil || $0.path == path }) {
                let scripted = state.script.remove(at: index)
                var answer = finish(scripted.status, scripted.body)
                answer.delay = scripted.delay
                answer.trickle = scripted.trickle
                answer.contentType = scripted.contentType ?? answer.contentType
                return answer
            }
            if let failure { return finish(failure.0, failure.1) }
            guard let device, !device.isEmpty else {
                return finish(400, "Missing or incorrectly formatted device token payload")
            }
            // Milliseconds, within ten minutes of now: a timestamp in seconds is refused.
            guard let timestamp, abs(timestamp - now() * 1000) < 600_000 else {
                return finish(400, "Missing or incorrectly formatted time stamp")
            }
            guard let transaction, !transaction.isEmpty, state.transactions.insert(transaction).inserted else {
                return finish(400, "Missing or incorrectly formatted payload")
            }
            switch path {
            case "/v1/query_two_bits":
                guard let bits = state.bits[device] else { return finish(200, state.notFoundAnswer) }
                return finish(
                    200, #"{"bit0":\#(bits.bit0),"bit1":\#(bits.bit1),"last_update_time":"2026-11"}"#, json: true)
            case "/v1/update_two_bits":
                guard let bit0 = json?["bit0"] as? Bool, let bit1 = json?["bit1"] as? Bool else {
                    return finish(400, "Missing or incorrectly formatted bits")
                }
                state.bits[device] = (bit0, bit1)
                return finish(200, "")
            default:
                return finish(200, "")
            }
        }
    }
}

/// Checks an `Authorization: Bearer <JWT>` header as Apple does.
struct JWTVerifier: Sendable {
    struct Refusal: Error {
        var status: Int
        var body: String
    }

    var teamIdentifier: String
    var keyIdentifier: String
    var publicKey: P256.Signing.PublicKey
    var now: @Sendable () -> Int64

    func verify(_ header: String?) -> Result<Int64, Refusal> {
        guard let header, header.hasPrefix("Bearer ") else {
            return .failure(Refusal(status: 400, body: "Missing or badly formatted authorization token"))
        }
        let parts = header.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let jose = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else {
            return .failure(Refusal(status: 400, body: "Missing or badly formatted authorization token"))
        }
        guard jose["alg"] as? String == "ES256", jose["kid"] as? String == keyIdentifier,
            claims["iss"] as? String == teamIdentifier,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else {
            return .failure(Refusal(status: 401, body: "Unable to verify authorization token"))
        }
        guard let iat = (claims["iat"] as? NSNumber)?.int64Value else {
            return .failure(Refusal(status: 401, body: "Unable to verify authorization token"))
        }
        // Apple rejects a token whose iat is more than an hour old (APNs' rule, which DeviceCheck follows).
        guard now() - iat <= 3600, iat - now() <= 60 else {
            return .failure(Refusal(status: 401, body: "Authorization Token Expired"))
        }
        return .success(iat)
    }
}
