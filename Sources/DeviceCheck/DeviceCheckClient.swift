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
    private let timeout: TimeAmount
    private let now: @Sendable () -> Int64
    private let makeTransactionIdentifier: @Sendable () -> String

    /// - Parameters:
    ///   - httpClient: a client (`makeHTTPClient`), or nil for one of its own.
    ///   - ownsHTTPClient: whether `shutdown()` shuts `httpClient` down too.
    ///   - timeout: for one call, connect to answer.
    ///   - now: milliseconds since 1970, for `timestamp`.
    package init(endpoint: DeviceCheckEndpoint, authorization: DeviceCheckAuthorization, httpClient: HTTPClient? = nil, ownsHTTPClient: Bool = false,
                 timeout: Duration = .seconds(10),
                 now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
                 makeTransactionIdentifier: @escaping @Sendable () -> String = { UUID().uuidString }) {
        self.endpoint = endpoint
        self.authorization = authorization
        if let httpClient {
            http = httpClient
            self.ownsHTTPClient = ownsHTTPClient
        } else {
            // The system's trust roots alone cannot fail to load.
            http = (try? Self.makeHTTPClient()) ?? HTTPClient(eventLoopGroupProvider: .singleton)
            self.ownsHTTPClient = true
        }
        let components = timeout.components
        self.timeout = .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        self.now = now
        self.makeTransactionIdentifier = makeTransactionIdentifier
    }

    /// The HTTP client a server uses for DeviceCheck: HTTP/2 when offered, no
    /// redirects, and the system's CAs plus `additionalTrustRootPath` (a
    /// proxy's CA, or a test's).
    package static func makeHTTPClient(additionalTrustRootPath: String? = nil) throws(DeviceCheckError) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let additionalTrustRootPath {
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(additionalTrustRootPath), !certificates.isEmpty else {
                throw DeviceCheckError(.configuration, "cannot read the CA certificate \(additionalTrustRootPath) (PEM)")
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
        _ = try await call("/v1/validate_device_token", deviceToken: deviceToken, bits: nil)
    }

    package func queryBits(deviceToken: String) async throws(DeviceCheckError) -> DeviceBits {
        let (body, isJSON) = try await call("/v1/query_two_bits", deviceToken: deviceToken, bits: nil)
        // A device never updated gets 200 with plain text, not JSON: Apple says
        // "Bit State Not Found", the live service "Failed to find bit state".
        // Both mean the two bits are false.
        guard isJSON || body.first == UInt8(ascii: "{") else { return .unset }
        struct Answer: Decodable {
            var bit0: Bool
            var bit1: Bool
            var last_update_time: String?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(body)) else {
            throw DeviceCheckError(.unexpected, status: 200, "the query's answer is not two bits")
        }
        return DeviceBits(bit0: answer.bit0, bit1: answer.bit1, lastUpdateTime: answer.last_update_time)
    }

    /// Sends both bits: Apple does not say what happens to an omitted one.
    package func updateBits(_ bits: DeviceBits, deviceToken: String) async throws(DeviceCheckError) {
        _ = try await call("/v1/update_two_bits", deviceToken: deviceToken, bits: bits)
    }

    /// A well-formed DCDevice token: base64 with no line breaks, of a bounded
    /// size (Apple's are a few kilobytes). Anything else is refused before a call.
    package static func isWellFormed(deviceToken: String) -> Bool {
        let bytes = deviceToken.utf8
        guard (1...16_384).contains(bytes.count), bytes.count % 4 == 0 else { return false }
        return bytes.allSatisfy { byte in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 43 || byte == 47 || byte == 61
        } && Data(base64Encoded: deviceToken) != nil
    }

    private func call(_ path: String, deviceToken: String, bits: DeviceBits?) async throws(DeviceCheckError) -> (body: [UInt8], isJSON: Bool) {
        guard Self.isWellFormed(deviceToken: deviceToken) else {
            throw DeviceCheckError(.badDeviceToken, "the device token is not base64 (DCDevice.generateToken's data, base64-encoded without line breaks)")
        }
        var payload: [String: Any] = ["device_token": deviceToken, "transaction_id": makeTransactionIdentifier(), "timestamp": now()]
        if let bits {
            payload["bit0"] = bits.bit0
            payload["bit1"] = bits.bit1
        }
        guard let body = try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw DeviceCheckError(.badRequest, "cannot encode the request")
        }
        var request = HTTPClientRequest(url: endpoint.baseURL + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: try authorization.headerValue())
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Array(body)))
        do {
            let response = try await http.execute(request, timeout: timeout)
            let answer = try await response.body.collect(upTo: 64 * 1024)
            let bytes = Array(answer.readableBytesView)
            guard response.status == .ok else {
                throw DeviceCheckError.answer(status: Int(response.status.code), body: String(decoding: bytes, as: UTF8.self))
            }
            let isJSON = response.headers.first(name: "Content-Type")?.lowercased().contains("json") ?? false
            return (bytes, isJSON)
        } catch let error as DeviceCheckError {
            throw error
        } catch {
            // AHC's errors name the host and the cause, never the body or headers.
            throw DeviceCheckError(.transport, "no answer from \(endpoint): \(error)")
        }
    }
}
