import AtomicFiles
import Foundation

extension APNsConfiguration {
    /// The environment variable that overrides Apple's production address
    /// (tests point it at a local mock).
    package static let urlVariable = "PASSFORGE_APNS_URL"
    /// The environment variable naming an extra CA certificate (PEM) to trust
    /// for the APNs connection, for a mock whose certificate a test CA issued.
    package static let trustedCAVariable = "PASSFORGE_APNS_CA_CERTIFICATE"
    /// The environment variable setting the HTTP/2 connections per topic
    /// (`passforge push --connections` and `build --push-connections` take precedence).
    package static let connectionsVariable = "PASSFORGE_APNS_CONNECTIONS"
    /// The most connections per topic passforge opens: Apple asks for few, long-lived connections.
    package static let maxConnectionsPerTopic = 16

    /// The connection settings `passforge push` and `serve --push` use:
    /// production APNs unless `PASSFORGE_APNS_URL` says otherwise, with the
    /// CA of `PASSFORGE_APNS_CA_CERTIFICATE` trusted too.
    package static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(APNsClientError) -> APNsConfiguration {
        let url = environment[urlVariable].flatMap { $0.isEmpty ? nil : $0 } ?? productionURL
        var configuration = APNsConfiguration(baseURL: url)
        if let text = environment[connectionsVariable], !text.isEmpty {
            configuration.connectionsPerTopic = try connections(text, source: connectionsVariable)
        }
        if let caPath = environment[trustedCAVariable], !caPath.isEmpty {
            // A CA certificate is a few kilobytes; a system's whole bundle a few hundred.
            guard let bytes = try? AtomicFileSystem.readFile(caPath, limit: 4 << 20) else {
                throw .invalidConfiguration(
                    "\(trustedCAVariable)=\(caPath) cannot be read; point it at a PEM certificate file or unset it")
            }
            configuration.additionalTrustRootsPEM = bytes
        }
        return configuration
    }

    /// A count of connections per topic from `source` (a variable or an option), 1 to `maxConnectionsPerTopic`.
    package static func connections(_ text: String, source: String) throws(APNsClientError) -> Int {
        guard let count = Int(text), (1...maxConnectionsPerTopic).contains(count) else {
            throw .invalidConfiguration(
                "\(source)=\(text) is not a number of connections from 1 to \(maxConnectionsPerTopic)")
        }
        return count
    }
}
