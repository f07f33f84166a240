package import Logging
import NIOCore
import Synchronization

/// At most `maximum` connections open at once, below the open-file limit.
///
/// Every connection costs a file descriptor. Past the limit, `accept(2)`
/// fails with EMFILE, NIO stops accepting for a second at a time
/// (`AcceptBackoffHandler`), and the store and the tree can no longer open
/// a file: about 1,020 half-sent requests under the usual soft limit of
/// 1024 stopped `/health` (issue 31). So the server counts its connections,
/// and when a new one would pass the cap it closes the **oldest connection
/// that is idle or still sending its request** (keep-alive connections
/// waiting for a request, requests whose head or body has not all arrived)
/// and takes the new one. A connection whose request the server is
/// answering is left alone, unless the answer has taken longer than
/// `answerGrace` (a client that does not read its response). When every
/// connection is being answered, the new one gets a 503 and is closed.
///
/// Why closing the oldest rather than refusing the newest: refusing keeps
/// whoever holds the connections, so slow clients would lock everyone else
/// out, `/health` and registrations included, for as long as they like
/// (the request deadline only bounds each one, and they reconnect). Closing
/// the oldest of them lets every new request in, `/health` among them:
/// a slow client loses its connection only while the server is at its cap,
/// and only after every client that came later than it.
package final class ConnectionLimit: Sendable {
    package let maximum: Int
    /// A connection answered for longer than this may be closed at the cap.
    let answerGrace: UInt64
    private let state: Mutex<State>
    private let logger: Logger
    /// What the warning names: the option that sets the cap, and the open-file limit.
    private let origin: String
    /// Counts what happens at the cap, and reports the open connections on a scrape.
    private let metrics: ServerMetrics?

    /// One open connection.
    package final class Connection: Sendable {
        let id: UInt64
        let close: @Sendable () -> Void
        /// Uptime in nanoseconds when the server began answering its request (never 0); 0 when it is not answering.
        private let answeringSince = Atomic<UInt64>(0)

        init(id: UInt64, close: @escaping @Sendable () -> Void) {
            self.id = id
            self.close = close
        }

        /// The request has arrived whole and the server answers it.
        package func startAnswering(now: UInt64 = ConnectionLimit.uptime()) {
            answeringSince.store(max(now, 1), ordering: .relaxed)
        }

        /// The answer is sent: the connection waits for a request again.
        package func finishAnswering() {
            answeringSince.store(0, ordering: .relaxed)
        }

        /// Whether it may be closed to make room: idle, still sending, or answered for too long.
        func mayBeClosed(now: UInt64, grace: UInt64) -> Bool {
            let since = answeringSince.load(ordering: .relaxed)
            // `since` may be a moment after `now` (read on another thread): not past its grace then.
            return since == 0 || (now > since && now - since > grace)
        }
    }

    private struct State {
        var open: [UInt64: Connection] = [:]
        /// Identifiers in the order the connections were accepted, from `head`; closed ones are skipped, then dropped.
        var order: [UInt64] = []
        var head = 0
        var nextID: UInt64 = 1
        var report = CapReport()
    }

    /// What happened at the cap since the last log line.
    private struct CapReport {
        var closed = 0
        var refused = 0
        var lastLine: UInt64?
        var firstSinceLine: UInt64?
    }

    /// One log line a minute at most while the cap is reached.
    static let reportInterval: UInt64 = 60_000_000_000

    package init(
        maximum: Int, answerGrace: Duration = .seconds(60), origin: String = "", metrics: ServerMetrics? = nil,
        logger: Logger
    ) {
        self.maximum = max(1, maximum)
        let (seconds, attoseconds) = answerGrace.components
        self.answerGrace = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.origin = origin
        self.logger = logger
        self.metrics = metrics
        state = Mutex(State())
        metrics?.observe(self)
    }

    package static func uptime() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    /// How many connections are open.
    package var openCount: Int { state.withLock { $0.open.count } }

    /// Admits a new connection, first closing the oldest one that may be closed when the cap is
    /// reached; nil when every open connection is being answered (the caller refuses the new one).
    /// `close` closes the new connection, should it be chosen later.
    package func open(close: @escaping @Sendable () -> Void, now: UInt64 = uptime()) -> Connection? {
        let (admitted, evicted, line) = state.withLock { state -> (Connection?, Connection?, String?) in
            var evicted: Connection?
            if state.open.count >= maximum {
                evicted = Self.oldestClosable(&state, now: now, grace: answerGrace)
                if let evicted {
                    state.open[evicted.id] = nil
                    state.report.closed += 1
                } else {
                    state.report.refused += 1
                }
                let line = reportLine(&state.report, now: now, openCount: state.open.count)
                guard evicted != nil else { return (nil, nil, line) }
                return (Self.add(&state, close: close), evicted, line)
            }
            return (Self.add(&state, close: close), nil, nil)
        }
        evicted?.close()
        if let line { logger.warning("\(line)") }
        if evicted != nil || admitted == nil { metrics?.recordConnectionAtCap(admitted == nil ? "refused" : "closed") }
        return admitted
    }

    /// The connection is closed (by either side, or at the cap).
    package func closed(_ connection: Connection, now: UInt64 = uptime()) {
        let line = state.withLock { state -> String? in
            state.open[connection.id] = nil
            Self.compact(&state)
            // What happened at the cap since the last line, once its minute is over.
            guard state.report.closed + state.report.refused > 0, let last = state.report.lastLine,
                now &- last >= Self.reportInterval
            else { return nil }
            return reportLine(&state.report, now: now, openCount: state.open.count)
        }
        if let line { logger.warning("\(line)") }
    }

    private static func add(_ state: inout State, close: @escaping @Sendable () -> Void) -> Connection {
        let connection = Connection(id: state.nextID, close: close)
        state.nextID += 1
        state.open[connection.id] = connection
        state.order.append(connection.id)
        return connection
    }

    /// The first connection in accept order that may be closed. Closed ones at the front are dropped on the way.
    private static func oldestClosable(_ state: inout State, now: UInt64, grace: UInt64) -> Connection? {
        var index = state.head
        while index < state.order.count {
            if let connection = state.open[state.order[index]] {
                if connection.mayBeClosed(now: now, grace: grace) { return connection }
            } else if index == state.head {
                state.head += 1
            }
            index += 1
        }
        return nil
    }

    /// Keeps `order` within twice the open connections (it only grows otherwise).
    private static func compact(_ state: inout State) {
        guard state.order.count - state.head > 2 * state.open.count + 1024 || state.head > 4096 else { return }
        state.order = state.order[state.head...].filter { state.open[$0] != nil }
        state.head = 0
    }

    /// The warning for the cap, at most once a minute: nil when a line was written less than a minute ago.
    private func reportLine(_ report: inout CapReport, now: UInt64, openCount: Int) -> String? {
        if report.firstSinceLine == nil { report.firstSinceLine = now }
        if let last = report.lastLine, now &- last < Self.reportInterval { return nil }
        let seconds = max(1, (now &- (report.lastLine ?? report.firstSinceLine ?? now)) / 1_000_000_000)
        let line =
            "connection cap of \(maximum) reached\(origin): "
            + "closed \(report.closed) idle or half-sent connections to take new ones, "
            + "refused \(report.refused) (every connection was being answered)"
            + (report.lastLine == nil ? "" : " in the last \(seconds) s")
            + "; at most one such line a minute"
        report = CapReport(lastLine: now)
        return line
    }

    // MARK: Default cap

    /// File descriptors kept for everything that is not a client connection: the store (SQLite's
    /// database, journal and shared memory, or PostgreSQL's pool), the files of the tree a request
    /// reads or writes (a pass, an index file and its temporary file and lock), the event loops,
    /// the log, APNs and DeviceCheck connections. An eighth of the limit, and at least 128.
    package static func headroom(openFileLimit: Int) -> Int {
        max(128, openFileLimit / 8)
    }

    /// The least headroom `--max-connections` may leave.
    package static let minimumHeadroom = 64

    /// Beyond this, memory rather than file descriptors limits a server: a half-sent request holds about
    /// 28 KiB (RSS measured with 5,000 of them), so 16,384 take some 450 MiB.
    package static let defaultCeiling = 16_384

    /// The cap when none is given: the open-file limit less the headroom, at most `defaultCeiling`.
    package static func defaultMaximum(openFileLimit: Int) -> Int {
        max(16, min(defaultCeiling, openFileLimit - headroom(openFileLimit: openFileLimit)))
    }
}
