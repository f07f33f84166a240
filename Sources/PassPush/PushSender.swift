package import Foundation
package import Logging
import PassModel

/// One push to send: wake the devices behind `token` for passes of type `topic`.
package struct PushNotification: Sendable, Hashable {
    /// The hexadecimal APNs device token a device registered.
    package var token: String
    /// The pass type identifier (the `apns-topic`).
    package var topic: String

    package init(token: String, topic: String) {
        self.token = token
        self.topic = topic
    }
}

/// The final word on one push of a run.
package struct PushOutcome: Sendable, Equatable {
    package enum Result: Sendable, Equatable {
        /// APNs answered 200: record it, the push is done.
        case delivered(apnsID: String?)
        /// The token is dead: delete its registrations (older than `since`, when given).
        case tokenInvalid(since: Date?, reason: String)
        /// Not delivered in this run; it stays pending and the next run sends it.
        case leftPending(PendingReason)
    }

    package enum PendingReason: Sendable, Equatable {
        /// Every attempt the retry policy allows failed; the last one for this cause.
        case retriesExhausted(APNsRetryCause)
        /// The run stopped (stop verdict or cancellation) before it could finish.
        case runStopped
        /// The run stopped before this push was started.
        case notStarted
    }

    package var notification: PushNotification
    package var result: Result
    /// Requests made for this push in this run.
    package var attempts: Int
}

/// What a run did, for the person who ran it.
package struct PushSummary: Sendable, Equatable {
    /// HTTP requests sent (retries included).
    package var sent = 0
    /// Pushes APNs accepted.
    package var succeeded = 0
    /// Pushes whose token is invalid (410, 400 BadDeviceToken, malformed).
    package var tokensInvalid = 0
    /// Requests that were retries of an earlier failed attempt.
    package var retries = 0
    /// Pushes not delivered in this run, left for the next one.
    package var leftPending = 0
    /// Why the run stopped early, if it did.
    package var stopReason: APNsStopReason?

    package init() {}
}

/// Sends a run's pushes over one `APNsSending` client: each push until APNs
/// accepts it once, at most `maxInFlight` at a time, retrying what APNs could
/// not take with backoff, and stopping the whole run when an answer shows that
/// every other push would fail too.
///
/// Outcomes are reported one at a time, in completion order, through an async
/// callback so the caller can record them durably (e.g. in batches); a push
/// whose outcome was not recorded as delivered simply stays pending for the
/// next run: a push that failed is retried by the next push run, never lost.
package struct PushSender: Sendable {
    /// Sleeps for a backoff; injectable so tests do not wait.
    package typealias Sleep = @Sendable (Duration) async throws -> Void
    /// A uniformly random number in `0...1` for full jitter; injectable for tests.
    package typealias RandomFraction = @Sendable () -> Double

    package let client: any APNsSending
    package let retryPolicy: APNsRetryPolicy
    package let maxInFlight: Int
    private let sleep: Sleep
    private let randomFraction: RandomFraction
    private let logger: Logger

    package init(
        client: any APNsSending,
        retryPolicy: APNsRetryPolicy = .default,
        maxInFlight: Int = 100,
        logger: Logger = Logger(label: "passforge.push"),
        sleep: @escaping Sleep = { try await Task.sleep(for: $0) },
        randomFraction: @escaping RandomFraction = { Double.random(in: 0...1) }
    ) {
        self.client = client
        self.retryPolicy = retryPolicy
        self.maxInFlight = max(1, maxInFlight)
        self.logger = logger
        self.sleep = sleep
        self.randomFraction = randomFraction
    }

    /// A sender using the retry policy and in-flight bound of `client`'s configuration.
    package init(
        client: APNsClient,
        logger: Logger = Logger(label: "passforge.push"),
        sleep: @escaping Sleep = { try await Task.sleep(for: $0) },
        randomFraction: @escaping RandomFraction = { Double.random(in: 0...1) }
    ) {
        self.init(
            client: client as any APNsSending,
            retryPolicy: client.configuration.retryPolicy,
            maxInFlight: client.configuration.maxRequestsInFlight,
            logger: logger,
            sleep: sleep,
            randomFraction: randomFraction
        )
    }

    /// Sends every distinct (token, topic) of `notifications` and reports each
    /// one's outcome exactly once through `onOutcome`, serially.
    ///
    /// Repeats of the same (token, topic) are merged into one push
    /// (Apple's "Handling notification responses from APNs": 429
    /// TooManyRequests means too many pushes to one token; merge them).
    package func send(
        _ notifications: [PushNotification],
        onOutcome: @Sendable (PushOutcome) async -> Void
    ) async -> PushSummary {
        var seen = Set<PushNotification>()
        seen.reserveCapacity(notifications.count)
        var queue = notifications.filter { seen.insert($0).inserted }[...]
        var summary = PushSummary()

        func record(_ delivery: Delivery) async {
            summary.sent += delivery.outcome.attempts
            summary.retries += max(0, delivery.outcome.attempts - 1)
            switch delivery.outcome.result {
            case .delivered: summary.succeeded += 1
            case .tokenInvalid: summary.tokensInvalid += 1
            case .leftPending: summary.leftPending += 1
            }
            if summary.stopReason == nil, let stop = delivery.stop {
                summary.stopReason = stop
                logger.error("Push run stopped: \(stop.message)")
            }
            await onOutcome(delivery.outcome)
        }

        // The first push goes alone: it opens the connection and learns that the
        // server speaks HTTP/2 before the burst (see APNsClient), and if APNs
        // cannot be reached at all the run stops here with one clear error.
        if let first = queue.popFirst() {
            await record(await deliver(first))
        }

        if summary.stopReason == nil, !queue.isEmpty, !Task.isCancelled {
            await withTaskGroup(of: Delivery.self) { group in
                for _ in 0..<maxInFlight {
                    guard let next = queue.popFirst() else { break }
                    group.addTask { await deliver(next) }
                }
                // One finished, one started: at most `maxInFlight` pushes at a time.
                while let delivery = await group.next() {
                    await record(delivery)
                    if summary.stopReason != nil || Task.isCancelled {
                        // Pushes in flight are cancelled; what they did not get
                        // answered stays pending, like everything not started.
                        group.cancelAll()
                        continue
                    }
                    if let next = queue.popFirst() {
                        group.addTask { await deliver(next) }
                    }
                }
            }
        }

        for notification in queue {
            await record(
                Delivery(
                    outcome: PushOutcome(notification: notification, result: .leftPending(.notStarted), attempts: 0)))
        }
        return summary
    }

    /// A sender over every connection of `group`: its retry policy, and each connection's in-flight bound
    /// times the connections.
    package init(group: APNsConnectionGroup, logger: Logger = Logger(label: "passforge.push")) {
        self.init(
            client: group as any APNsSending, retryPolicy: group.configuration.retryPolicy,
            maxInFlight: group.maxInFlight, logger: logger)
    }

    /// One push's whole life in this run, and the stop reason it found, if any.
    private struct Delivery: Sendable {
        var outcome: PushOutcome
        var stop: APNsStopReason?
    }

    private func deliver(_ notification: PushNotification) async -> Delivery {
        var attempts = 0
        var lastCause: APNsRetryCause?
        var neverReachedServer = true
        func outcome(_ result: PushOutcome.Result, stop: APNsStopReason? = nil) -> Delivery {
            Delivery(outcome: PushOutcome(notification: notification, result: result, attempts: attempts), stop: stop)
        }

        for attempt in 1...retryPolicy.maxAttempts {
            if Task.isCancelled { return outcome(.leftPending(.runStopped)) }
            attempts += 1
            let verdict: APNsVerdict
            do {
                let response = try await client.send(token: notification.token, topic: notification.topic)
                verdict = APNsVerdict(
                    response, topic: notification.topic, kind: client.certificateKind, endpoint: client.endpoint)
            } catch {
                if Task.isCancelled || error is CancellationError { return outcome(.leftPending(.runStopped)) }
                verdict = APNsVerdict(
                    error: error, topic: notification.topic, kind: client.certificateKind, endpoint: client.endpoint)
            }
            switch verdict {
            case .delivered(let apnsID):
                return outcome(.delivered(apnsID: apnsID))
            case .tokenInvalid(let since, let reason):
                return outcome(.tokenInvalid(since: since, reason: reason))
            case .stop(let reason):
                return outcome(.leftPending(.runStopped), stop: reason)
            case .retry(let cause):
                lastCause = cause
                neverReachedServer = neverReachedServer && cause.neverReachedServer
                if attempt < retryPolicy.maxAttempts {
                    let delay = retryPolicy.delay(beforeRetry: attempt, fraction: randomFraction())
                    logger.debug("Retrying push to \(redacted(token: notification.token)) in \(delay): \(cause)")
                    do {
                        try await sleep(delay)
                    } catch {
                        return outcome(.leftPending(.runStopped))
                    }
                }
            }
        }

        let cause = lastCause ?? .transport("no attempt made")
        // Not one attempt got a connection to the server: every other push would
        // fail the same way, so the run stops with host and port, not a stack trace.
        if neverReachedServer {
            let endpoint = client.endpoint
            let stop: APNsStopReason
            if case .setup = cause {
                stop = APNsVerdict.tlsFailure(
                    "\(endpoint) closed every connection right after the handshake, "
                        + "which is how a server refuses a client certificate", endpoint: endpoint,
                    topic: notification.topic,
                    kind: client.certificateKind)
            } else {
                stop = APNsStopReason(
                    kind: .unreachable,
                    message: """
                        Cannot reach APNs at \(endpoint) (\(cause)) after \(attempts) attempts. Check the network and \
                        PASSFORGE_APNS_URL; the pushes stay pending for the next run.
                        """)
            }
            return outcome(.leftPending(.retriesExhausted(cause)), stop: stop)
        }
        return outcome(.leftPending(.retriesExhausted(cause)))
    }
}
