import Foundation
import PassPush
import Testing

@Suite("APNs answers, retry policy, configuration")
struct APNsRulesTests {
    let endpoint = try! APNsEndpoint(parsing: APNsConfiguration.productionURL)

    func verdict(_ status: Int, _ reason: String? = nil) -> APNsVerdict {
        APNsVerdict(APNsResponse(status: status, reason: reason), topic: "pass.com.example.test", endpoint: endpoint)
    }

    func stopKind(_ verdict: APNsVerdict) -> APNsStopReason.Kind? {
        if case .stop(let reason) = verdict { reason.kind } else { nil }
    }

    @Test func classifiesAnswersAsPassFormatNotesSay() {
        #expect(verdict(200) == .delivered(apnsID: nil))
        #expect(verdict(400, "BadDeviceToken") == .tokenInvalid(since: nil, reason: "BadDeviceToken"))
        #expect(verdict(410, "Unregistered") == .tokenInvalid(since: nil, reason: "Unregistered"))
        #expect(verdict(429, "TooManyRequests") == .retry(.status(429, reason: "TooManyRequests")))
        #expect(verdict(500) == .retry(.status(500, reason: nil)))
        #expect(verdict(503, "ServiceUnavailable") == .retry(.status(503, reason: "ServiceUnavailable")))
        #expect(stopKind(verdict(403, "BadCertificate")) == .certificateRejected)
        #expect(stopKind(verdict(403, "Forbidden")) == .certificateRejected)
        #expect(stopKind(verdict(403)) == .certificateRejected)
        #expect(stopKind(verdict(400, "DeviceTokenNotForTopic")) == .wrongTopic)
        #expect(stopKind(verdict(400, "TopicDisallowed")) == .wrongTopic)
        #expect(stopKind(verdict(413, "PayloadTooLarge")) == .requestRejected)
        #expect(stopKind(verdict(400, "BadPriority")) == .requestRejected)
        #expect(stopKind(verdict(404, "BadPath")) == .requestRejected)
    }

    @Test func stopMessagesSayWhatIsWrongAndWhatToDo() {
        guard case .stop(let forbidden) = verdict(403, "BadCertificate") else {
            Issue.record()
            return
        }
        #expect(forbidden.message.contains("403 BadCertificate"))
        #expect(forbidden.message.contains("pass.com.example.test"))
        guard case .stop(let topic) = verdict(400, "DeviceTokenNotForTopic") else {
            Issue.record()
            return
        }
        #expect(topic.message.contains("passTypeIdentifier"))
    }

    @Test func backoffUsesExponentialCeilingsWithFullJitter() {
        let policy = APNsRetryPolicy(maxAttempts: 6, baseDelay: .milliseconds(100), maxDelay: .milliseconds(500))
        #expect(policy.ceiling(beforeRetry: 1) == .milliseconds(100))
        #expect(policy.ceiling(beforeRetry: 2) == .milliseconds(200))
        #expect(policy.ceiling(beforeRetry: 3) == .milliseconds(400))
        #expect(policy.ceiling(beforeRetry: 4) == .milliseconds(500))
        #expect(policy.ceiling(beforeRetry: 60) == .milliseconds(500))
        #expect(policy.delay(beforeRetry: 3, fraction: 0) == .zero)
        #expect(policy.delay(beforeRetry: 3, fraction: 0.5) == .milliseconds(200))
        #expect(policy.delay(beforeRetry: 3, fraction: 7) == .milliseconds(400))
    }

    @Test func parsesEndpoints() throws {
        #expect(try APNsEndpoint(parsing: "https://api.push.apple.com").description == "api.push.apple.com:443")
        #expect(try APNsEndpoint(parsing: "https://127.0.0.1:8443/").baseURL == "https://127.0.0.1:8443")
        #expect(throws: APNsClientError.self) { try APNsEndpoint(parsing: "http://api.push.apple.com") }
        #expect(throws: APNsClientError.self) { try APNsEndpoint(parsing: "https://host/3/device") }
        #expect(throws: APNsClientError.self) { try APNsEndpoint(parsing: "https://host:99999") }
    }

    @Test func identityNeverShowsItsKey() {
        let identity = APNsClientIdentity(
            certificateChainPEM: Array("CERT".utf8), privateKeyPEM: Array("SECRET KEY".utf8))
        var dumped = ""
        dump(identity, to: &dumped)
        for text in [String(describing: identity), String(reflecting: identity), dumped, "\(identity)"] {
            #expect(!text.contains("SECRET"))
            #expect(!text.contains("83, 69, 67"))  // the key's bytes as numbers
        }
    }

    @Test func malformedTokensCountAsInvalid() {
        let verdict = APNsVerdict(error: APNsClientError.malformedToken("zzzz"), topic: "pass.x", endpoint: endpoint)
        #expect(verdict == .tokenInvalid(since: nil, reason: "malformed token"))
    }
}
