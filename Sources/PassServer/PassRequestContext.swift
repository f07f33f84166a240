import Hummingbird
import NIOCore

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

    /// The client's IP address, without the port: the unit of rate limiting.
    package var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
