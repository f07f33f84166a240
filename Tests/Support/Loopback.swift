import Glibc

/// Loopback sockets for tests that start servers: a free port, and whether
/// something listens on one.
public enum Loopback {
    /// A loopback port nobody listens on right now.
    public static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw LoopbackError("socket: \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw LoopbackError("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func canConnect(port: Int) -> Bool {
        guard let socket = try? connectedSocket(port: port) else { return false }
        close(socket)
        return true
    }

    /// A TCP socket connected to 127.0.0.1:`port`; the caller closes it.
    public static func connectedSocket(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw LoopbackError("socket: \(errno)") }
        let connected = withAddress(port: port) { connect(socket, $0, $1) == 0 }
        guard connected else {
            close(socket)
            throw LoopbackError("connect to 127.0.0.1:\(port) failed")
        }
        return socket
    }
}

extension Loopback {
    /// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length (for bind and connect).
    static func withAddress<T>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}

public struct LoopbackError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
