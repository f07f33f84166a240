/// Problems the APNs client detects itself, before or around a request.
/// Descriptions are for people and never contain key material or a whole token.
package enum APNsClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot work (bad URL, bad CA file…).
    case invalidConfiguration(String)
    /// The certificate chain or private key could not be read.
    case invalidIdentity(String)
    /// A push token that is not hexadecimal, shown truncated. APNs tokens are hex
    /// strings; anything else cannot be a token and must not go into a URL path.
    case malformedToken(String)
    /// A topic (pass type identifier) that is empty or contains spaces/control characters.
    case invalidTopic(String)
    /// The server answered over something other than HTTP/2.
    case notHTTP2(endpoint: String, version: String)
    /// The server closed the connection after TCP connect but before HTTP/2 was
    /// up, while no connection had ever worked. With TLS 1.3 this is how a
    /// server refuses a client certificate: the alert comes after the client
    /// thinks the handshake is done, and async-http-client only reports
    /// "remote connection closed".
    case closedDuringSetup(endpoint: String)
    /// `send` after `shutdown`.
    case shutDown

    package var description: String {
        switch self {
        case .invalidConfiguration(let message), .invalidIdentity(let message):
            return message
        case .malformedToken(let token):
            return "The push token \(token) is not a hexadecimal APNs device token."
        case .invalidTopic(let topic):
            return
                "\"\(topic)\" is not a valid APNs topic: it must be the pass type identifier, e.g. pass.com.example.membership."
        case .notHTTP2(let endpoint, let version):
            return
                "\(endpoint) answered over \(version), but APNs only speaks HTTP/2. Check that PASSFORGE_APNS_URL points to APNs (default https://api.push.apple.com)."
        case .closedDuringSetup(let endpoint):
            return "\(endpoint) closed the connection during the TLS/HTTP/2 setup"
        case .shutDown:
            return "The APNs client was already shut down."
        }
    }
}

/// A token as it may appear in logs and errors: its first 8 characters.
@inline(__always)
func redacted(token: some StringProtocol) -> String {
    token.count > 8 ? "\(token.prefix(8))…" : String(token)
}
