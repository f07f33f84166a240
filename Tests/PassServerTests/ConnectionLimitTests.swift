import Logging
import PassServer
import Synchronization
import Testing

/// issue 31: the connection cap closes the oldest idle or half-sent
/// connection for a new one, leaves the ones being answered alone, and
/// says so in the log at most once a minute.
@Suite struct ConnectionLimitTests {
    /// Which connections were closed, by name.
    final class Closed: Sendable {
        private let names = Mutex<[String]>([])
        func add(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    static let second: UInt64 = 1_000_000_000

    @Test func closesTheOldestIdleOrHalfSentConnectionForANewOne() {
        let log = LogLines()
        let limit = ConnectionLimit(maximum: 3, answerGrace: .seconds(60), origin: " (test)", logger: log.logger)
        let closed = Closed()
        func open(_ name: String, at seconds: UInt64) -> ConnectionLimit.Connection? {
            limit.open(close: { closed.add(name) }, now: 1 + seconds * Self.second)
        }
        let a = open("a", at: 0)
        let b = open("b", at: 0)
        let c = open("c", at: 0)
        #expect(a != nil && b != nil && c != nil && closed.all.isEmpty && limit.openCount == 3)
        // At the cap: the oldest (a) goes.
        let d = open("d", at: 1)
        #expect(d != nil && closed.all == ["a"] && limit.openCount == 3)
        // b is being answered: c goes, then d.
        b?.startAnswering(now: 2 * Self.second)
        #expect(open("e", at: 2) != nil && closed.all == ["a", "c"])
        let f = open("f", at: 3)
        #expect(f != nil && closed.all == ["a", "c", "d"])
        limit.closed(a!)  // a's own close arrives late: counted once.
        #expect(limit.openCount == 3)
    }

    @Test func refusesWhenEveryConnectionIsAnsweredAndClosesAnAnswerPastItsGrace() {
        let log = LogLines()
        let limit = ConnectionLimit(maximum: 2, answerGrace: .seconds(60), logger: log.logger)
        let closed = Closed()
        let a = limit.open(close: { closed.add("a") }, now: 1)
        let b = limit.open(close: { closed.add("b") }, now: 1)
        a?.startAnswering(now: 10 * Self.second)
        b?.startAnswering(now: 20 * Self.second)
        #expect(limit.open(close: { closed.add("c") }, now: 30 * Self.second) == nil)
        #expect(closed.all.isEmpty && limit.openCount == 2)
        // 61 s into a's answer (a client that does not read it): a may go.
        #expect(limit.open(close: { closed.add("d") }, now: 71 * Self.second) != nil)
        #expect(closed.all == ["a"])
        // Answered and done: b waits for a request again, and goes first.
        b?.finishAnswering()
        #expect(limit.open(close: { closed.add("e") }, now: 72 * Self.second) != nil)
        #expect(closed.all == ["a", "b"])
    }

    @Test func warnsAtMostOnceAMinuteWithWhatHappened() {
        let log = LogLines()
        let origin = " (--max-connections 1; open-file limit 1024)"
        let limit = ConnectionLimit(maximum: 1, origin: origin, logger: log.logger)
        var open: [ConnectionLimit.Connection] = []
        for second in 0..<30 {
            if let connection = limit.open(close: {}, now: 1 + UInt64(second) * Self.second) { open.append(connection) }
        }
        #expect(log.lines.count == 1, "\(log.lines)")
        #expect(log.lines.first?.contains("connection cap of 1 reached\(origin)") == true)
        #expect(log.lines.first?.contains("closed 1 idle or half-sent") == true, "\(log.lines)")
        // After the minute, the next close reports the 28 since: nothing is lost when the burst has ended.
        limit.closed(open[5], now: 70 * Self.second)
        #expect(log.lines.count == 2, "\(log.lines)")
        #expect(log.lines.last?.contains("closed 28 idle or half-sent connections") == true, "\(log.lines)")
        limit.closed(open[6], now: 200 * Self.second)
        #expect(log.lines.count == 2, "nothing new to say")
        #expect(log.levels.allSatisfy { $0 == .warning })
    }

    @Test func theDefaultCapLeavesHeadroomBelowTheOpenFileLimit() {
        #expect(ConnectionLimit.defaultMaximum(openFileLimit: 1024) == 896)
        #expect(ConnectionLimit.defaultMaximum(openFileLimit: 4096) == 3584)
        #expect(ConnectionLimit.defaultMaximum(openFileLimit: 524_288) == ConnectionLimit.defaultCeiling)
        #expect(ConnectionLimit.defaultMaximum(openFileLimit: 100) == 16)
    }

    @Test func theOpenFileLimitIsRaisedToTheHardLimit() {
        let raise = OpenFileLimit.raiseToHardLimit()
        #expect(raise.problem == nil)
        #expect(raise.after >= raise.before && OpenFileLimit.current() == raise.after)
    }
}

/// A logger whose lines the test reads.
final class LogLines: Sendable {
    private let captured = Mutex<[(Logger.Level, String)]>([])
    var lines: [String] { captured.withLock { $0.map(\.1) } }
    var levels: [Logger.Level] { captured.withLock { $0.map(\.0) } }
    var logger: Logger { Logger(label: "test") { _ in Handler(sink: self) } }

    func append(_ level: Logger.Level, _ line: String) { captured.withLock { $0.append((level, line)) } }

    struct Handler: LogHandler {
        let sink: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
            file: String, function: String, line: UInt
        ) {
            sink.append(level, "\(message)")
        }
    }
}
