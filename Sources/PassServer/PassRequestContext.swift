import Foundation
package import Hummingbird
package import NIOCore

/// The request context of `passforge serve`: Hummingbird's core context plus
/// the client's address (for `--rate-limit` and the access log).
package struct PassRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Request bodies are small JSON objects; larger ones are answered 413.
    package var maxUploadSize: Int { 64 * 1024 }

    /// The peer's IP address, without the port.
    package var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }

    /// The client's IP address: the unit of rate limits and log budgets.
    /// Behind a reverse proxy on the same machine (nginx, Caddy: the peer is a
    /// loopback address) it is the last address of X-Forwarded-For, the one
    /// the proxy itself added; from any other peer the header is ignored.
    package func clientAddress(of request: Request) -> String {
        let peer = clientAddress
        guard peer == "127.0.0.1" || peer == "::1" || peer.hasPrefix("::ffff:127."),
            let forwarded = request.headers.last(where: { $0.name.canonicalName == "x-forwarded-for" })?.value,
            let last = forwarded.split(separator: ",").last
        else { return peer }
        let address = last.trimmingCharacters(in: CharacterSet.whitespaces)
        let isAddress =
            (1...45).contains(address.utf8.count)
            && address.utf8.allSatisfy {
                PathRules.isHexDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":")
            }
        return isAddress ? address : peer
    }
}
