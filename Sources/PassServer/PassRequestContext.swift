import Hummingbird
import NIOCore

/// The request context of `passforge serve`: Hummingbird's core context plus
/// the client's address (for `--rate-limit` and the access log).
public struct PassRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Request bodies are small JSON objects; larger ones are answered 413.
    public var maxUploadSize: Int { 64 * 1024 }

    /// The client's IP address, without the port: the unit of rate limiting.
    public var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
