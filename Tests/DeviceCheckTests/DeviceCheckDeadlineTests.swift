import AsyncHTTPClient
import Crypto
import DeviceCheck
import MockDeviceCheck
import Synchronization
import Testing

/// The client's deadline against a transport that ignores cancellation: the caller is resumed by whichever
/// comes first, and never waits for a request that will not stop.
@Suite struct DeviceCheckDeadlineTests {
    /// A request that ignores its cancellation: it waits on a continuation only the test resumes, and records
    /// whether it was asked to stop.
    final class StubbornRequest: Sendable {
        private let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let finished = Mutex(false)
        let sawCancellation = Mutex(false)
        let started = Mutex(0)
        let ended = Mutex(false)

        func send(_ request: HTTPClientRequest) async throws -> (status: Int, body: [UInt8]) {
            started.withLock { $0 += 1 }
            await withCheckedContinuation { continuation in
                let done = finished.withLock { finished in finished }
                if done { continuation.resume() } else { waiting.withLock { $0 = continuation } }
            }
            sawCancellation.withLock { $0 = Task.isCancelled }
            ended.withLock { $0 = true }
            return (200, Array("Bit State Not Found".utf8))
        }

        /// Lets the request end, so that no task outlives the test.
        func release() {
            let continuation = waiting.withLock { waiting in
                let continuation = waiting
                waiting = nil
                return continuation
            }
            finished.withLock { $0 = true }
            continuation?.resume()
        }
    }

    static func client(timeout: Duration, transport: @escaping DeviceCheckTransport) throws -> DeviceCheckClient {
        let credentials = try DeviceCheckCredentials(
            teamIdentifier: "ABCDE12345", keyIdentifier: "KEY1234567",
            privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation)
        return DeviceCheckClient(
            endpoint: try DeviceCheckEndpoint(baseURL: "http://127.0.0.1:9"),
            authorization: DeviceCheckAuthorization(credentials: credentials), timeout: timeout, transport: transport)
    }

    /// Before the fix the caller waited for the request inside a task group: this test then never ended (the
    /// time limit fails it). The call waits its 200 ms deadline on purpose: it measures a real timeout.
    @Test(.timeLimit(.minutes(1))) func aRequestThatIgnoresCancellationCannotOutlastTheDeadline() async throws {
        let request = StubbornRequest()
        let client = try Self.client(timeout: .milliseconds(200), transport: { try await request.send($0) })
        let start = ContinuousClock.now
        let failure = await Self.failure { () async throws(DeviceCheckError) -> DeviceBits in
            try await client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "stubborn"))
        }
        #expect(failure?.kind == .transport && failure?.message.contains("within") == true, "the deadline's error")
        #expect(ContinuousClock.now - start < .seconds(30))
        let requests = request.started.withLock { $0 }
        #expect(requests == 1)
        request.release()
        await client.shutdown()
    }

    /// The request is cancelled once the deadline won, and its late answer is dropped.
    @Test(.timeLimit(.minutes(1))) func theLosingRequestIsCancelledAndItsAnswerDropped() async throws {
        let request = StubbornRequest()
        let client = try Self.client(timeout: .milliseconds(100), transport: { try await request.send($0) })
        let token = MockDeviceCheckServer.deviceToken(for: "late")
        await #expect(throws: DeviceCheckError.self) { _ = try await client.queryBits(deviceToken: token) }
        let cancelled = await Self.endOf(request)
        #expect(cancelled, "the request left behind was told to stop")
        await client.shutdown()
    }

    /// An answer before the deadline is the call's result; the deadline's timer does not outlive it.
    @Test func anAnswerBeforeTheDeadlineIsTheResult() async throws {
        let client = try Self.client(timeout: .seconds(60)) { _ in (200, Array(#"{"bit0":true,"bit1":false}"#.utf8)) }
        let bits = try await client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "quick"))
        #expect(bits == DeviceBits(bit0: true, bit1: false))
        await client.shutdown()
    }

    /// The caller's cancellation resumes it at once, though the request ignores it.
    @Test(.timeLimit(.minutes(1))) func theCallersCancellationResumesItAtOnce() async throws {
        let request = StubbornRequest()
        let client = try Self.client(timeout: .seconds(600), transport: { try await request.send($0) })
        let call = Task {
            try await client.queryBits(deviceToken: MockDeviceCheckServer.deviceToken(for: "cancelled"))
        }
        call.cancel()
        await #expect(throws: DeviceCheckError.self) { _ = try await call.value }
        await client.shutdown()
    }

    /// The error a call ended with, or nil when it succeeded.
    static func failure(_ call: () async throws(DeviceCheckError) -> DeviceBits) async -> DeviceCheckError? {
        do {
            _ = try await call()
            return nil
        } catch {
            return error
        }
    }

    /// Releases the request and reports whether it saw its cancellation when it ended.
    static func endOf(_ request: StubbornRequest) async -> Bool {
        request.release()
        // The request runs in a task of its own: wait for it to record its end.
        while !request.ended.withLock({ $0 }) { await Task.yield() }
        return request.sawCancellation.withLock { $0 }
    }
}
