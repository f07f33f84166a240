package import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The two bits Apple keeps for one device and one team.
package struct DeviceBits: Sendable, Equatable {
    package var bit0: Bool
    package var bit1: Bool
    /// `YYYY-MM` of the last update, when Apple has one.
    package var lastUpdateTime: String?

    package init(bit0: Bool, bit1: Bool, lastUpdateTime: String? = nil) {
        self.bit0 = bit0
        self.bit1 = bit1
        self.lastUpdateTime = lastUpdateTime
    }

    /// A device Apple has never stored bits for.
    package static let unset = DeviceBits(bit0: false, bit1: false)

    package subscript(bit: Int) -> Bool {
        get { bit == 0 ? bit0 : bit1 }
        set { if bit == 0 { bit0 = newValue } else { bit1 = newValue } }
    }
}

/// The three calls of Apple's DeviceCheck service (validate a device token,
/// query the two bits, update them).
package protocol DeviceCheckCalling: Sendable {
    func validate(deviceToken: String) async throws(DeviceCheckError)
    func queryBits(deviceToken: String) async throws(DeviceCheckError) -> DeviceBits
    func updateBits(_ bits: DeviceBits, deviceToken: String) async throws(DeviceCheckError)
    /// Lets go of connections; no call after it.
    func shutdown() async
}

/// Sends one request and reads its whole answer (status and body). The client's own goes through
/// async-http-client; a test's may be anything, including one that ignores cancellation.
package typealias DeviceCheckTransport = @Sendable (HTTPClientRequest) async throws -> (status: Int, body: [UInt8])

/// Apple's DeviceCheck service over HTTPS (HTTP/2 when the server offers it),
/// with async-http-client.
///
/// Each request is a POST with a JSON body and `Authorization: Bearer <JWT>`
/// ("Accessing and modifying per-device data"): `device_token` (base64, no
/// line breaks), a `transaction_id` unique per call and a `timestamp` in
/// milliseconds since 1970.
package final class DeviceCheckClient: DeviceCheckCalling {
    package let endpoint: DeviceCheckEndpoint
    private let authorization: DeviceCheckAuthorization
    private let http: HTTPClient
    private let ownsHTTPClient: Bool
    private let transport: DeviceCheckTransport
    /// The whole exchange of one call, body included.
    private let deadline: Duration
    private let now: @Sendable () -> Int64
    private let makeTransactionIdentifier: @Sendable () -> String

    /// - Parameters:
    ///   - httpClient: a client (`makeHTTPClient`), or nil for one of its own.
    ///   - ownsHTTPClient: whether `shutdown()` shuts `httpClient` down too.
    ///   - timeout: for one call, from connecting to the last byte of the answer.
    ///   - now: milliseconds since 1970, for `timestamp`.
    ///   - transport: sends a request instead of `httpClient` (a test's stand-in).
    package init(
        endpoint: DeviceCheckEndpoint, authorization: DeviceCheckAuthorization, httpClient: HTTPClient? = nil,
        ownsHTTPClient: Bool = false,
        timeout: Duration = .seconds(10),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        makeTransactionIdentifier: @escaping @Sendable () -> String = { UUID().uuidString },
        transport: DeviceCheckTransport? = nil
    ) {
        self.endpoint = endpoint
        self.authorization = authorization
        let client: HTTPClient
        if let httpClient {
            client = httpClient
            self.ownsHTTPClient = ownsHTTPClient
        } else {
            // The system's trust roots alone cannot fail to load.
            client = (try? Self.makeHTTPClient()) ?? HTTPClient(eventLoopGroupProvider: .singleton)
            self.ownsHTTPClient = true
        }
        http = client
        deadline = timeout
        let components = timeout.components
        let headTimeout = TimeAmount.nanoseconds(
            components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        self.transport =
            transport ?? { request in
                let response = try await client.execute(request, timeout: headTimeout)
                let answer = try await response.body.collect(upTo: 64 * 1024)
                return (Int(response.status.code), Array(answer.readableBytesView))
            }
        self.now = now
        self.makeTransactionIdentifier = makeTransactionIdentifier
    }

    /// The HTTP client a server uses for DeviceCheck: HTTP/2 when offered, no
    /// redirects, and the system's CAs plus `additionalTrustRootPath` (a
    /// proxy's CA, or a test's).
    package static func makeHTTPClient(additionalTrustRootPath: String? = nil) throws(DeviceCheckError) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let additionalTrustRootPath {
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(additionalTrustRootPath), !certificates.isEmpty
            else {
                throw DeviceCheckError(
                    .configuration, "cannot read the CA certificate \(additionalTrustRootPath) (PEM)")
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(5))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func shutdown() async {
        if ownsHTTPClient { try? await http.shutdown() }
    }

    package func validate(deviceToken: String) async throws(DeviceCheckError) {
        try Self.checkEmpty(
            try await call("/v1/validate_device_token", deviceToken: deviceToken, bits: nil), of: "validation")
    }

    package func queryBits(deviceToken: String) async throws(DeviceCheckError) -> DeviceBits {
        let body = try await call("/v1/query_two_bits", deviceToken: deviceToken, bits: nil)
        guard let bits = Self.bits(fromQueryAnswer: body) else {
            // Fail closed: an HTML maintenance page, an empty body or a JSON object of another shape with
            // status 200 is not Apple's answer, and reading it as "never claimed" would hand out a pass.
            throw DeviceCheckError(
                .unexpected, status: 200,
                "the query's answer is neither two bits (JSON bit0, bit1) nor \"Bit State Not Found\"")
        }
        return bits
    }

    /// The two bits in a query's 200, or nil for anything that is not one of Apple's two documented answers
    /// ("Accessing and modifying per-device data"): JSON with boolean `bit0` and `bit1` (and an optional
    /// `last_update_time` string), or the plain text of a device never updated. Apple's table calls the text
    /// "Bit State Not Found"; the live service says "Failed to find bit state" (devicecheck-notes, conflict 1).
    /// Both mean the two bits are false. Nothing else is accepted, whatever its Content-Type.
    package static func bits(fromQueryAnswer body: [UInt8]) -> DeviceBits? {
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if notFoundAnswers.contains(text.lowercased()) { return .unset }
        struct Answer: Decodable {
            var bit0: Bool
            var bit1: Bool
            var lastUpdateTime: String?

            enum CodingKeys: String, CodingKey {
                case bit0, bit1
                case lastUpdateTime = "last_update_time"
            }
        }
        // JSONDecoder takes a Bool from JSON true or false only (never 0, 1 or "true").
        guard text.hasPrefix("{"), let answer = try? JSONDecoder().decode(Answer.self, from: Data(text.utf8)) else {
            return nil
        }
        return DeviceBits(bit0: answer.bit0, bit1: answer.bit1, lastUpdateTime: answer.lastUpdateTime)
    }

    static let notFoundAnswers: Set<String> = ["bit state not found", "failed to find bit state"]

    /// Sends both bits: Apple does not say what happens to an omitted one.
    package func updateBits(_ bits: DeviceBits, deviceToken: String) async throws(DeviceCheckError) {
        try Self.checkEmpty(try await call("/v1/update_two_bits", deviceToken: deviceToken, bits: bits), of: "update")
    }

    /// Apple answers a done update or validation with 200 alone (an empty body, in every peer's
    /// observation); a 200 with a body (a proxy's or a maintenance page) is not that answer: fail closed.
    private static func checkEmpty(_ body: [UInt8], of call: String) throws(DeviceCheckError) {
        guard body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw DeviceCheckError(
                .unexpected, status: 200,
                "the \(call)'s 200 carried a body (\(body.count) bytes), which Apple's does not")
        }
    }

    /// A well-formed DCDevice token: base64 with no line breaks, of a bounded
    /// size (Apple's are a few kilobytes). Anything else is refused before a call.
    package static func isWellFormed(deviceToken: String) -> Bool {
        let bytes = deviceToken.utf8
        guard (1...16_384).contains(bytes.count), bytes.count % 4 == 0 else { return false }
        return bytes.allSatisfy { byte in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 43
                || byte == 47 || byte == 61
        } && Data(base64Encoded: deviceToken) != nil
    }

    /// One call to Apple: its 200's body, or the error of any other answer.
    ///
    /// One deadline (`timeout`) covers the whole exchange, connection, headers and body alike: a server
    /// that sends its headers at once and then its body a byte at a time cannot hold a claim past it
    /// (async-http-client's own deadline stops at the response head).
    private func call(_ path: String, deviceToken: String, bits: DeviceBits?) async throws(DeviceCheckError) -> [UInt8]
    {
        guard Self.isWellFormed(deviceToken: deviceToken) else {
            throw DeviceCheckError(
                .badDeviceToken,
                "the device token is not base64 (DCDevice.generateToken's data, base64-encoded without line breaks)")
        }
        var payload: [String: Any] = [
            "device_token": deviceToken, "transaction_id": makeTransactionIdentifier(), "timestamp": now(),
        ]
        if let bits {
            payload["bit0"] = bits.bit0
            payload["bit1"] = bits.bit1
        }
        guard
            let body = try? JSONSerialization.data(
                withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            throw DeviceCheckError(.badRequest, "cannot encode the request")
        }
        var request = HTTPClientRequest(url: endpoint.baseURL + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: try authorization.headerValue())
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Array(body)))
        let (status, bytes) = try await exchange(request)
        guard status == 200 else {
            throw DeviceCheckError.answer(status: status, body: String(decoding: bytes, as: UTF8.self))
        }
        return bytes
    }

    /// Sends `request` and reads the whole answer, or gives up at the deadline or at the caller's cancellation.
    ///
    /// Whichever comes first resumes the caller, once; the request is then cancelled and left to finish on its
    /// own. A task group would wait for it, and a request that ignores cancellation could outlast the deadline.
    private func exchange(_ request: HTTPClientRequest) async throws(DeviceCheckError) -> (Int, [UInt8]) {
        let (transport, deadline, endpoint) = (transport, self.deadline, endpoint)
        let first = FirstOutcome<Result<(Int, [UInt8]), DeviceCheckError>>()
        let sending = Task {
            do {
                let (status, body) = try await transport(request)
                first.offer(.success((status, body)))
            } catch {
                // AHC's errors name the host and the cause, never the body or headers.
                first.offer(.failure(DeviceCheckError(.transport, "no answer from \(endpoint): \(error)")))
            }
        }
        let timer = Task {
            // A cancelled sleep means the answer came first: nothing to offer.
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            first.offer(
                .failure(
                    DeviceCheckError(
                        .transport, "no whole answer from \(endpoint) within \(deadline) (headers and body)")))
        }
        let outcome = await withTaskCancellationHandler {
            await first.value()
        } onCancel: {
            first.offer(.failure(DeviceCheckError(.transport, "the call to \(endpoint) was cancelled")))
        }
        sending.cancel()
        timer.cancel()
        return try outcome.get()
    }
}
