import Synchronization

/// How much of `POST /v1/log` reaches the server's own log. The endpoint has
/// no authentication (Apple's devices send no token), so without a bound one
/// client could fill the disk through standard error. Each client address
/// gets `bytesPerClient` of log lines per minute, and all clients together
/// `bytesInTotal`; beyond that, messages are still kept in the bounded log
/// table but not written to the log, and one line says how many were left
/// out. The budget renews every minute.
package final class DeviceLogBudget: Sendable {
    package struct Decision: Equatable, Sendable {
        /// How many of the messages may be written to the log, in order.
        package var loggedCount: Int
        /// True for the first refusal of a window: say once that the budget is spent.
        package var announceExhausted: Bool
        /// Messages left out in the previous window, said when a new window starts.
        package var suppressedEarlier: (messages: Int, bytes: Int)?

        package init(loggedCount: Int, announceExhausted: Bool, suppressedEarlier: (messages: Int, bytes: Int)?) {
            self.loggedCount = loggedCount
            self.announceExhausted = announceExhausted
            self.suppressedEarlier = suppressedEarlier
        }

        package static func == (lhs: Decision, rhs: Decision) -> Bool {
            lhs.loggedCount == rhs.loggedCount && lhs.announceExhausted == rhs.announceExhausted
                && lhs.suppressedEarlier?.messages == rhs.suppressedEarlier?.messages
                && lhs.suppressedEarlier?.bytes == rhs.suppressedEarlier?.bytes
        }
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var spentInTotal = 0
        var spentByClient: [String: Int] = [:]
        var suppressedMessages = 0
        var suppressedBytes = 0
        var announced = false
    }

    package let bytesPerClient: Int
    package let bytesInTotal: Int
    private let window: Mutex<Window>
    private let length: Duration

    /// - Parameters: 0 for either budget means no bound.
    package init(
        bytesPerClient: Int = 32 * 1024, bytesInTotal: Int = 256 * 1024, window: Duration = .seconds(60),
        now: ContinuousClock.Instant = .now
    ) {
        self.bytesPerClient = bytesPerClient
        self.bytesInTotal = bytesInTotal
        self.length = window
        self.window = Mutex(Window(start: now))
    }

    /// Takes from the budget the messages (their UTF-8 sizes) that fit, in order.
    package func admit(client: String, messageSizes: [Int], now: ContinuousClock.Instant = .now) -> Decision {
        window.withLock { window in
            var suppressedEarlier: (Int, Int)?
            if now - window.start >= length {
                if window.suppressedMessages > 0 {
                    suppressedEarlier = (window.suppressedMessages, window.suppressedBytes)
                }
                window = Window(start: now)
            }
            var logged = 0
            var spentByClient = window.spentByClient[client] ?? 0
            for size in messageSizes {
                let fitsClient = bytesPerClient == 0 || spentByClient + size <= bytesPerClient
                let fitsTotal = bytesInTotal == 0 || window.spentInTotal + size <= bytesInTotal
                guard fitsClient, fitsTotal else { break }
                spentByClient += size
                window.spentInTotal += size
                logged += 1
            }
            // Bounded in memory: the clients of one minute.
            if spentByClient > 0, window.spentByClient.count < 100_000 || window.spentByClient[client] != nil {
                window.spentByClient[client] = spentByClient
            }
            var announce = false
            if logged < messageSizes.count {
                window.suppressedMessages += messageSizes.count - logged
                window.suppressedBytes += messageSizes[logged...].reduce(0, +)
                announce = !window.announced
                window.announced = true
            }
            return Decision(loggedCount: logged, announceExhausted: announce, suppressedEarlier: suppressedEarlier)
        }
    }
}
