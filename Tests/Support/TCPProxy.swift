import Foundation
import Glibc
import Synchronization

/// A TCP proxy on loopback for fault tests between a client and a server (PostgreSQL): it forwards each
/// connection to 127.0.0.1:`target`, optionally late by `delay` each way, or cuts a PostgreSQL connection at one
/// precise point of its answer (`cutBeforeReadyForQuery`). Blocking sockets on threads of its own, so a slow or
/// stuck peer never holds a test's tasks; `stop()` closes everything.
public final class TCPProxy: Sendable {
    /// The loopback port clients connect to.
    public let port: Int
    private let target: Int
    private let delay: Duration
    private let listener: Int32
    private let state = Mutex(State())
    private let cut: CutPoint?

    private struct State {
        var sockets: Set<Int32> = []
        var stopped = false
        var armed = false
        var cuts = 0
    }

    /// Where a PostgreSQL connection is cut once armed: after the CommandComplete of a statement whose
    /// RowDescription names `column`, before the ReadyForQuery that follows.
    public struct CutPoint: Sendable {
        public var column: String

        public init(column: String) { self.column = column }
    }

    /// Forwards to 127.0.0.1:`target`, each chunk `delay` late in each direction (zero: at once).
    public convenience init(to target: Int, delay: Duration = .zero) throws {
        try self.init(to: target, delay: delay, cut: nil)
    }

    /// Forwards to a PostgreSQL server at 127.0.0.1:`target` (without TLS: the answers are read as protocol
    /// messages). Once `arm()` was called, the first connection that answers a statement whose rows have the
    /// column `column` gets that statement's rows and CommandComplete, and then, instead of the ReadyForQuery
    /// that follows its Sync, the end of the connection (both ways): what a client sees of a server lost at
    /// that moment.
    public static func cuttingBeforeReadyForQuery(to target: Int, afterRowsWithColumn column: String) throws
        -> TCPProxy
    {
        try TCPProxy(to: target, delay: .zero, cut: CutPoint(column: column))
    }

    private init(to target: Int, delay: Duration, cut: CutPoint?) throws {
        self.target = target
        self.delay = delay
        self.cut = cut
        port = try Loopback.freePort()
        listener = try Self.listen(port: port)
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop() }
    }

    deinit { stop() }

    /// Makes the next matching answer the one cut (`cuttingBeforeReadyForQuery`).
    public func arm() { state.withLock { $0.armed = true } }

    /// How many connections were cut so far.
    public var cuts: Int { state.withLock { $0.cuts } }

    /// Stops accepting and closes every connection.
    public func stop() {
        let sockets = state.withLock { state -> Set<Int32> in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.sockets
        }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
    }

    // MARK: Connections

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard let server = try? Loopback.connectedSocket(port: target) else {
                close(client)
                continue
            }
            let registered = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.sockets.formUnion([client, server])
                return true
            }
            guard registered else {
                close(client)
                close(server)
                return
            }
            let pair = SocketPair(client: client, server: server)
            let proxy = self
            Thread.detachNewThread { proxy.pump(from: client, to: server, pair: pair, framer: nil) }
            let framer = cut.map { PostgresAnswerFramer(column: $0.column) }
            Thread.detachNewThread { proxy.pump(from: server, to: client, pair: pair, framer: framer) }
        }
    }

    /// Copies one direction until either side ends, then ends both; the second pump to finish closes them.
    private func pump(from source: Int32, to destination: Int32, pair: SocketPair, framer: PostgresAnswerFramer?) {
        let writer = delay == .zero ? nil : DelayedWriter(socket: destination, delay: delay)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var chunk = Array(buffer[0..<count])
            if let framer {
                let armed = state.withLock { $0.armed }
                let (forward, cutHere) = framer.scan(chunk, armed: armed)
                chunk = forward
                if cutHere {
                    let first = state.withLock { state -> Bool in
                        guard state.armed else { return false }
                        state.armed = false
                        state.cuts += 1
                        return true
                    }
                    if first {
                        _ = Self.sendAll(chunk, to: destination)
                        break reading
                    }
                }
            }
            if let writer { writer.enqueue(chunk) } else if !Self.sendAll(chunk, to: destination) { break }
        }
        writer?.finish()
        Glibc.shutdown(pair.client, Int32(SHUT_RDWR))
        Glibc.shutdown(pair.server, Int32(SHUT_RDWR))
        if pair.finishOne() {
            state.withLock { $0.sockets.subtract([pair.client, pair.server]) }
            close(pair.client)
            close(pair.server)
        }
    }

    /// Writes all of `bytes`; false when the peer is gone (MSG_NOSIGNAL: no SIGPIPE for the test process).
    static func sendAll(_ bytes: [UInt8], to socket: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private static func listen(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw LoopbackError("socket: \(errno)") }
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = Loopback.withAddress(port: port) { bind(socket, $0, $1) == 0 }
        guard bound, Glibc.listen(socket, 64) == 0 else {
            close(socket)
            throw LoopbackError("listen on 127.0.0.1:\(port): \(errno)")
        }
        return socket
    }
}

/// The two sockets of one proxied connection; the second of its two pumps to end closes them.
private final class SocketPair: Sendable {
    let client: Int32
    let server: Int32
    private let finished = Atomic<Int>(0)

    init(client: Int32, server: Int32) {
        self.client = client
        self.server = server
    }

    func finishOne() -> Bool { finished.add(1, ordering: .sequentiallyConsistent).newValue == 2 }
}

/// Writes chunks to a socket each `delay` after it was read, in order, on a thread of its own.
private final class DelayedWriter: Sendable {
    private let socket: Int32
    private let delay: Duration
    private let queue = Mutex<(chunks: [(due: ContinuousClock.Instant, bytes: [UInt8])], ended: Bool)>(([], false))
    private let signal = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(socket: Int32, delay: Duration) {
        self.socket = socket
        self.delay = delay
        let writer = self
        Thread.detachNewThread { writer.run() }
    }

    func enqueue(_ bytes: [UInt8]) {
        queue.withLock { $0.chunks.append((ContinuousClock.now + delay, bytes)) }
        signal.signal()
    }

    /// Writes what is queued (still late), then returns.
    func finish() {
        queue.withLock { $0.ended = true }
        signal.signal()
        done.wait()
    }

    private func run() {
        defer { done.signal() }
        var healthy = true
        while true {
            signal.wait()
            while let next = queue.withLock({ $0.chunks.isEmpty ? nil : $0.chunks.removeFirst() }) {
                let wait = ContinuousClock.now.duration(to: next.due)
                // The delay this proxy exists to add.
                if wait > .zero { Thread.sleep(forTimeInterval: Self.seconds(wait)) }
                if healthy { healthy = TCPProxy.sendAll(next.bytes, to: socket) }
            }
            if queue.withLock({ $0.ended && $0.chunks.isEmpty }) { return }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Reads a PostgreSQL server's answers as messages (a type byte, then a 4-byte length that counts
/// itself) to find the cut point: after the CommandComplete ('C') of a statement whose RowDescription
/// ('T') names the column, before the next ReadyForQuery ('Z').
private final class PostgresAnswerFramer: @unchecked Sendable {
    private let column: [UInt8]
    private var pending: [UInt8] = []
    private var sawColumn = false
    private var completed = false

    init(column: String) { self.column = Array(column.utf8) }

    /// What of `chunk` to forward, and whether to cut the connection after it: when armed and at the
    /// cut point, only the bytes before that ReadyForQuery.
    func scan(_ chunk: [UInt8], armed: Bool) -> (forward: [UInt8], cut: Bool) {
        let start = pending.count
        pending += chunk
        var offset = 0
        while pending.count - offset >= 5 {
            let length = pending[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            guard pending.count - offset >= 1 + length else { break }
            let type = pending[offset]
            let body = pending[(offset + 5)..<(offset + 1 + length)]
            switch type {
            case UInt8(ascii: "T"): sawColumn = body.contains(column)
            case UInt8(ascii: "C"): completed = sawColumn
            case UInt8(ascii: "Z"):
                if armed && completed {
                    let forward = Array(pending[start..<max(start, offset)])
                    pending = []
                    return (forward, true)
                }
                sawColumn = false
                completed = false
            default: break
            }
            offset += 1 + length
        }
        pending.removeFirst(offset)
        return (chunk, false)
    }
}
