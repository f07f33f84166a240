/// How often, and how patiently, a push that APNs could not take right now is
/// tried again within one run.
///
/// Waits use exponential backoff with *full jitter*: before retry `n` the
/// sender sleeps a uniformly random time in `0...min(maxDelay, baseDelay·2^(n−1))`.
/// The randomness spreads the retries of many pushes that failed together (a
/// GOAWAY or a 503 hits every stream on the connection at once), so they do not
/// come back in a synchronized burst. Apple's "Handling notification responses
/// from APNs": 429 (too many requests) and 500/503 are to be retried later,
/// with backoff.
package struct APNsRetryPolicy: Sendable, Equatable {
    /// Attempts per push, the first one included; at least 1.
    package var maxAttempts: Int
    /// The ceiling of the first wait.
    package var baseDelay: Duration
    /// The largest ceiling any wait can have.
    package var maxDelay: Duration

    package init(maxAttempts: Int, baseDelay: Duration, maxDelay: Duration) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(.zero, baseDelay)
        self.maxDelay = max(self.baseDelay, maxDelay)
    }

    /// Five attempts, waits of at most 0.5 s, 1 s, 2 s, 4 s: a push that still
    /// fails is left for the next run rather than holding this one up.
    package static let `default` = APNsRetryPolicy(
        maxAttempts: 5, baseDelay: .milliseconds(500), maxDelay: .seconds(30))

    /// The longest wait before retry number `retry` (1 for the wait after the first attempt).
    package func ceiling(beforeRetry retry: Int) -> Duration {
        let doublings = min(max(retry - 1, 0), 62)
        let base = baseDelay.seconds
        let ceiling = base * Double(UInt64(1) << UInt64(doublings))
        return .seconds(min(ceiling, maxDelay.seconds))
    }

    /// The wait before retry number `retry`, given a uniformly random `fraction` in `0...1`.
    package func delay(beforeRetry retry: Int, fraction: Double) -> Duration {
        let clamped = fraction.isFinite ? min(max(fraction, 0), 1) : 1
        return ceiling(beforeRetry: retry) * clamped
    }
}

extension Duration {
    /// This duration in (fractional) seconds.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
