import AsyncHTTPClient
import Crypto
import DeviceCheck
import Foundation
import MockDeviceCheck
import NIOSSL
import Synchronization
import TestSupport
import Testing

/// The DeviceCheck client against the in-process mock of Apple's service, over real HTTPS on loopback.
@Suite struct DeviceCheckClientTests {
    static let team = DeviceCheckRig.team
    static let keyID = DeviceCheckRig.keyIdentifier

    static func withRig(timeout: Duration = .seconds(10), _ body: (DeviceCheckRig) async throws -> Void) async throws {
        try await DeviceCheckRig.with(timeout: timeout, body)
    }

    @Test func aNewDeviceHasBothBitsFalseAndAnUpdateIsKept() async throws {
        try await Self.withRig { rig in
            let device = "device-1"
            let bits = try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: device))
            #expect(bits == .unset)
            // The live service's wording of the same answer.
            rig.server.answerNotFound(with: "Failed to find bit state")
            #expect(
                try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "other")) == .unset)
            try await rig.client.updateBits(
                DeviceBits(bit0: true, bit1: false), deviceToken: MockDeviceCheckServer.deviceToken(for: device))
            #expect(rig.server.bits(of: device)! == (true, false))
            let again = try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: device))
            #expect(again.bit0 && !again.bit1 && again.lastUpdateTime == "2026-11")
            try await rig.client.validate(deviceToken: MockDeviceCheckServer.deviceToken(for: device))

            let requests = rig.server.requests
            #expect(requests.count == 5 && requests.allSatisfy { $0.status == 200 })
            #expect(Set(requests.compactMap(\.transactionIdentifier)).count == 5, "transaction_id is unique per call")
            #expect(requests.allSatisfy { $0.timestamp == rig.clock.now * 1000 }, "timestamp is in milliseconds")
        }
    }

    @Test func theJWTIsReusedAndRenewedAfterItsLifetime() async throws {
        try await Self.withRig { rig in
            let token = { MockDeviceCheckServer.deviceToken(for: "device-2") }
            _ = try await rig.client.queryBits(deviceToken: token())
            rig.clock.advance(by: 49 * 60)
            _ = try await rig.client.queryBits(deviceToken: token())
            rig.clock.advance(by: 2 * 60)  // 51 minutes after the first token: a new one
            _ = try await rig.client.queryBits(deviceToken: token())
            rig.clock.advance(by: 70 * 60)  // well past Apple's hour: still accepted, because it was renewed
            _ = try await rig.client.queryBits(deviceToken: token())
            let issued = rig.server.requests.compactMap(\.issuedAt)
            #expect(issued.count == 4)
            #expect(issued[0] == issued[1], "one JWT for calls 49 minutes apart")
            #expect(
                issued[2] == issued[0] + 51 * 60 && issued[3] == issued[2] + 70 * 60,
                "renewed, not reused past 50 minutes")
        }
    }

    @Test func aJWTFromAnotherKeyIsRefusedAsAuthorization() async throws {
        try await Self.withRig { rig in
            let stranger = try DeviceCheckCredentials(
                teamIdentifier: Self.team, keyIdentifier: Self.keyID,
                privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation)
            let client = DeviceCheckClient(
                endpoint: try DeviceCheckEndpoint(baseURL: rig.server.baseURL),
                authorization: DeviceCheckAuthorization(credentials: stranger, now: { rig.clock.now }),
                httpClient: rig.http, now: { rig.clock.now * 1000 })
            await #expect(throws: DeviceCheckError.self) {
                _ = try await client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "d"))
            }
            do {
                _ = try await client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "d"))
            } catch let error as DeviceCheckError {
                #expect(error.kind == .authorization && error.status == 401)
            }
        }
    }

    @Test(arguments: [
        (MockDeviceCheckServer.ScriptedAnswer.badDeviceToken, DeviceCheckError.Kind.badDeviceToken),
        (.badBits, .badRequest), (.badTimestamp, .badRequest), (.badAuthorizationToken, .authorization),
        (.invalidAuthorizationToken, .authorization), (.authorizationTokenExpired, .authorization),
        (.forbidden, .authorization),
        (.methodNotAllowed, .unexpected), (.tooManyRequests, .rateLimited), (.serverError, .unavailable),
        (.serviceUnavailable, .unavailable),
    ])
    func everyAnswerOfApplesTableHasItsKind(answer: MockDeviceCheckServer.ScriptedAnswer, kind: DeviceCheckError.Kind)
        async throws
    {
        try await Self.withRig { rig in
            rig.server.failNext(answer)
            let token = MockDeviceCheckServer.deviceToken(for: "device-3")
            do {
                try await rig.client.updateBits(DeviceBits(bit0: true, bit1: false), deviceToken: token)
                Issue.record("an answer \(answer.status) was taken as success")
            } catch let error as DeviceCheckError {
                #expect(error.kind == kind && error.status == answer.status)
                #expect(error.isTemporary == (kind == .rateLimited || kind == .unavailable))
                #expect(!error.description.contains(token), "the device token never appears in a message")
            }
            #expect(rig.server.bits(of: "device-3") == nil)
        }
    }

    @Test func noAnswerInTimeIsATemporaryTransportFailure() async throws {
        try await Self.withRig(timeout: .milliseconds(300)) { rig in
            // Held far longer than the timeout, so that a loaded machine cannot let the answer win.
            rig.server.failNext(.init(status: 200, delay: .seconds(120)))
            do {
                _ = try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "slow"))
                Issue.record("a call past its timeout succeeded")
            } catch let error as DeviceCheckError {
                #expect(error.kind == .transport && error.isTemporary)
            }
        }
    }

    /// Issue 30: one deadline covers the whole exchange. Apple's headers come at once and the body a byte at
    /// a time over 60 s; the call ends at its 1 s deadline, far before the body's end. The bound is half the
    /// trickle, not the deadline: in make test's unit run, CPU-bound tests can hold both cooperative threads
    /// for seconds (12 s measured once), and no code can resume the caller without a thread.
    /// (This test waits about a second on purpose.)
    @Test func theDeadlineCoversTheBodyToo() async throws {
        try await Self.withRig(timeout: .seconds(1)) { rig in
            rig.server.failNext(
                .init(
                    status: 200, body: #"{"bit0":false,"bit1":false,"last_update_time":"2026-11"}"#,
                    trickle: .seconds(60), contentType: "application/json"))
            let start = ContinuousClock.now
            do {
                _ = try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "trickle"))
                Issue.record("a trickled answer past the deadline was read")
            } catch let error as DeviceCheckError {
                #expect(error.kind == .transport && error.isTemporary)
            }
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    /// Issue 30: fail closed. A query's 200 is one of Apple's two documented answers or an error.
    @Test(arguments: [
        ("<html><body>Maintenance</body></html>", "text/html"), ("", "text/plain"), ("OK", "text/plain"),
        (#"{"status":"ok"}"#, "application/json"), (#"{"bit0":0,"bit1":0}"#, "application/json"),
        (#"{"bit0":"false","bit1":false}"#, "application/json"), (#"{"bit0":false}"#, "application/json"),
        (#"{"bit0":false,"bit1":false,"last_update_time":5}"#, "application/json"),
        ("Bit State Not Found, maybe", "text/plain"),
    ])
    func aQueryAnswerOutsideApplesShapeIsAnError(body: String, contentType: String) async throws {
        try await Self.withRig { rig in
            rig.server.failNext(.init(status: 200, body: body, contentType: contentType))
            do {
                let bits = try await rig.client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "closed"))
                Issue.record("\(body.debugDescription) read as \(bits)")
            } catch let error as DeviceCheckError {
                #expect(error.kind == .unexpected && error.status == 200 && !error.leftBitsUnchanged)
            }
        }
    }

    @Test func applesDocumentedQueryAnswersAreRead() {
        let read = { (text: String) in DeviceCheckClient.bits(fromQueryAnswer: Array(text.utf8)) }
        #expect(read("Bit State Not Found") == .unset && read("Failed to find bit state\n") == .unset)
        #expect(
            read(#"{"bit0":true,"bit1":false,"last_update_time":"2026-11"}"#)
                == DeviceBits(bit0: true, bit1: false, lastUpdateTime: "2026-11"))
        #expect(read(#"{"bit0":false,"bit1":true}"#) == DeviceBits(bit0: false, bit1: true))
    }

    @Test func anUpdateWhose200CarriesABodyIsNotTakenAsDone() async throws {
        try await Self.withRig { rig in
            rig.server.failNext(
                .init(
                    status: 200, body: "<html>Service Temporarily Unavailable</html>", path: "/v1/update_two_bits",
                    contentType: "text/html"))
            await #expect(throws: DeviceCheckError.self) {
                try await rig.client.updateBits(
                    DeviceBits(bit0: true, bit1: false), deviceToken: MockDeviceCheckServer.deviceToken(for: "u"))
            }
        }
    }

    @Test func refusalsOfTheKeyAreMisconfigurationsAndLeaveTheBits() {
        for status in [401, 403] {
            let error = DeviceCheckError.answer(status: status, body: "")
            #expect(error.isMisconfiguration && !error.isTemporary && error.leftBitsUnchanged)
        }
        #expect(
            DeviceCheckError.answer(status: 400, body: "Missing or badly formatted authorization token")
                .isMisconfiguration)
        #expect(
            !DeviceCheckError.answer(status: 503, body: "").leftBitsUnchanged
                && !DeviceCheckError.answer(status: 503, body: "").isMisconfiguration)
        #expect(DeviceCheckError.answer(status: 429, body: "").leftBitsUnchanged)
    }

    @Test func malformedDeviceTokensAreRefusedBeforeAnyCall() async throws {
        try await Self.withRig { rig in
            for token in ["", "not base64!", "YWJj\nZGVm", String(repeating: "A", count: 20_000)] {
                await #expect(throws: DeviceCheckError.self) { _ = try await rig.client.queryBits(deviceToken: token) }
            }
            #expect(rig.server.requests.isEmpty)
        }
    }
}

@Suite struct DeviceCheckConfigurationTests {
    @Test func baseURLsMustBeHTTPSButOnLoopback() throws {
        #expect(
            try DeviceCheckEndpoint(baseURL: "https://api.devicecheck.apple.com/").baseURL
                == "https://api.devicecheck.apple.com")
        for loopback in ["http://127.0.0.1:8080", "http://localhost:9", "http://[::1]:80", "http://127.8.0.1"] {
            #expect(throws: Never.self) { try DeviceCheckEndpoint(baseURL: loopback) }
        }
        for refused in [
            "http://10.0.0.1", "http://api.devicecheck.apple.com", "ftp://x", "not a url", "https://x?y=1",
            "http://127.0.0.1.evil.com",
        ] {
            #expect(throws: DeviceCheckError.self) { try DeviceCheckEndpoint(baseURL: refused) }
        }
        #expect(
            DeviceCheckEndpoint(environment: .development).baseURL == "https://api.development.devicecheck.apple.com")
    }

    @Test func keysAndIdentifiersAreCheckedWithoutQuotingTheKey() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        #expect(throws: Never.self) {
            try DeviceCheckCredentials(teamIdentifier: "ABCDE12345", keyIdentifier: "KEY1234567", privateKeyPEM: pem)
        }
        #expect(throws: DeviceCheckError.self) {
            try DeviceCheckCredentials(teamIdentifier: "abc", keyIdentifier: "KEY1234567", privateKeyPEM: pem)
        }
        let rsa =
            "-----BEGIN PRIVATE KEY-----\nMIIBVAIBADANBgkqhkiG9w0BAQEFAASCAT4wggE6AgEAAkEA\n-----END PRIVATE KEY-----\n"
        do {
            _ = try DeviceCheckCredentials(
                teamIdentifier: "ABCDE12345", keyIdentifier: "KEY1234567", privateKeyPEM: rsa)
            Issue.record("a key that is not P-256 was accepted")
        } catch let error as DeviceCheckError {
            #expect(error.kind == .configuration && !error.description.contains("MIIB"))
        }
    }

    /// Apple's .p8 is what `openssl genpkey` writes for P-256: PKCS#8 PEM. This one was written once by
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` (a throwaway test key): a unit test starts
    /// no process.
    static let openSSLMadeP8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgr1OP7YJmMwTCpQVT
        U2D4Ufg/aWJ6Rdny8TlKnaR17SihRANCAAQ8RHVLzQE2naHIkYpYBRsXMSfxwpBI
        AtMXdKySmLGF3LssI5eKenHo40vN3mLpgYdZPLnpBAbh18CL13CHJMEs
        -----END PRIVATE KEY-----

        """

    @Test func anOpenSSLMadeP8KeyIsReadAndItsTokensVerify() throws {
        let folder = TemporaryDirectory("devicecheck-key")
        let path = folder.write("AuthKey_KEY1234567.p8", Self.openSSLMadeP8)
        let credentials = try DeviceCheckCredentials(
            teamIdentifier: "ABCDE12345", keyIdentifier: "KEY1234567", privateKeyPath: path)
        let token = try DeviceCheckAuthorization(credentials: credentials, now: { 1_800_000_000 }).token()
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        let header = try #require(Base64URL.decode(parts[0]))
        let claims = try #require(Base64URL.decode(parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iss":"ABCDE12345","iat":1800000000}"#)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(credentials.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }
}
