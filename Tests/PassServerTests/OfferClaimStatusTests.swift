import DeviceCheck
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PassOffers
import PassServer
import RegistrationStore
import SQLiteRegistrationStore
import Synchronization
import TestSupport
import Testing
import WalletTree

/// `POST v1/offers/{offer}/claims` with offers configured, in process: the router through HummingbirdTesting
/// and a stand-in for Apple's DeviceCheck behind `DeviceCheckCalling`. Sockets and the HTTPS mock stay in
/// OfferClaimRouteTests.
@Suite struct OfferClaimStatusTests {
    /// Apple's two bits per device, kept in memory; a device token is base64 of `<device>|<random>`, so each
    /// claim's tokens are new (DeviceCheck tokens are single-use) and still name their device.
    final class StubDeviceCheck: DeviceCheckCalling {
        private let bits = Mutex<[String: DeviceBits]>([:])
        private let failures = Mutex<[DeviceCheckError]>([])

        static func token(for device: String) -> String {
            Data("\(device)|\(UUID().uuidString)".utf8).base64EncodedString()
        }

        static func device(of token: String) -> String {
            let text = Data(base64Encoded: token).map { String(decoding: $0, as: UTF8.self) } ?? token
            return String(text.split(separator: "|").first ?? "")
        }

        /// The next call fails with `error`.
        func failNext(_ error: DeviceCheckError) { failures.withLock { $0.append(error) } }

        private func nextFailure() throws(DeviceCheckError) {
            if let error = failures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw error }
        }

        func validate(deviceToken: String) async throws(DeviceCheckError) { try nextFailure() }

        func queryBits(deviceToken: String) async throws(DeviceCheckError) -> DeviceBits {
            try nextFailure()
            return bits.withLock { $0[Self.device(of: deviceToken)] ?? .unset }
        }

        func updateBits(_ bits: DeviceBits, deviceToken: String) async throws(DeviceCheckError) {
            try nextFailure()
            self.bits.withLock { $0[Self.device(of: deviceToken)] = bits }
        }

        func shutdown() async {}
    }

    /// The application with the offer `welcome` over the fixture's passes `serials`.
    static func application(
        _ fixture: ServiceStatusTests.Fixture, serials: [String], deviceCheck: StubDeviceCheck,
        claimsPerMinute: Int = 1000
    ) async throws -> some ApplicationProtocol {
        let store = try SQLiteRegistrationStore(path: fixture.state.file("offers-\(UUID().uuidString).sqlite"))
        try await store.replaceOfferPools(
            with: serials.map { OfferPass(offer: "welcome", passTypeIdentifier: TestPKI.passType, serialNumber: $0) })
        var configuration = PassServerConfiguration()
        configuration.offers = OfferClaimEndpoint(
            service: OfferClaimService(
                offers: [OfferDefinition(name: "welcome", bit: 0)], store: store, deviceCheck: deviceCheck),
            downloadBaseURL: "https://passes.example.com", claimsPerMinute: claimsPerMinute)
        var logger = Logger(label: "test")
        logger.logLevel = .critical  // the misconfiguration's error line is expected here
        return PassServer.application(
            configuration: configuration, output: OutputFolder(directory: fixture.project.output), store: store,
            logger: logger)
    }

    static func body(device: String, id: String = UUID().uuidString) -> ByteBuffer {
        let (query, update) = (StubDeviceCheck.token(for: device), StubDeviceCheck.token(for: device))
        return ByteBuffer(string: #"{"claimIdentifier":"\#(id)","queryToken":"\#(query)","updateToken":"\#(update)"}"#)
    }

    @Test func createdRetriedConflictAndGone() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        let deviceCheck = StubDeviceCheck()
        let app = try await Self.application(fixture, serials: ["C-0000"], deviceCheck: deviceCheck)
        try await app.test(.router) { client in
            let uri = "/v1/offers/welcome/claims"
            let id = UUID().uuidString
            var created = ""
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1", id: id)) { response in
                #expect(response.status == .created)
                created = String(buffer: response.body)
                #expect(created.contains(#""serialNumber":"C-0000""#), "\(created)")
            }
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1", id: id)) { response in
                #expect(response.status == .ok && String(buffer: response.body) == created, "a retry: the same pass")
            }
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1")) { response in
                #expect(response.status == .conflict)
                #expect(String(buffer: response.body).contains(#""error":"alreadyClaimed""#))
            }
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-2")) { response in
                #expect(response.status == .gone)
                #expect(String(buffer: response.body).contains(#""error":"offerExhausted""#))
            }
        }
    }

    @Test func appleUnavailableIs503AndARefusedKeyIs500() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        let deviceCheck = StubDeviceCheck()
        let app = try await Self.application(fixture, serials: ["C-0000", "C-0001"], deviceCheck: deviceCheck)
        try await app.test(.router) { client in
            let uri = "/v1/offers/welcome/claims"
            deviceCheck.failNext(DeviceCheckError.answer(status: 503, body: ""))
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1")) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "5")
            }
            deviceCheck.failNext(DeviceCheckError.answer(status: 403, body: ""))
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1")) { response in
                #expect(response.status == .internalServerError)
                #expect(response.headers[.retryAfter] == nil, "a broken setup is not retried")
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(String(buffer: response.body).contains("misconfigured"))
            }
            // Apple answers again: the claim goes through.
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1")) { response in
                #expect(response.status == .created)
            }
        }
    }

    @Test func claimsOverTheClientsLimitAre429() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        let app = try await Self.application(
            fixture, serials: ["C-0000", "C-0001"], deviceCheck: StubDeviceCheck(), claimsPerMinute: 1)
        try await app.test(.router) { client in
            let uri = "/v1/offers/welcome/claims"
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-1")) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: uri, method: .post, body: Self.body(device: "phone-2")) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }
}
