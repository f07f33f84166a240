import Foundation
import Logging
import WalletTree
import PassPackage

/// A pool of APNs clients, one per topic (pass type), each with the Pass Type
/// ID certificate that signs that topic's passes — the same material the build
/// signs with (passforge.yml `signing:`, else PASSFORGE_SIGNING_*) — as its TLS
/// client identity. Apple's "Adding a Web Service to Update Passes": a pass
/// update notification uses the pass type identifier as its topic and the
/// Pass Type ID certificate for the connection.
package actor APNsClientPool: PushSenderProvider {
    private let identities: any SigningIdentityProvider
    private let configuration: APNsConfiguration
    private let logger: Logger
    private var clients: [String: APNsClient] = [:]

    package init(identities: any SigningIdentityProvider, configuration: APNsConfiguration, logger: Logger = Logger(label: "passforge.apns")) {
        self.identities = identities
        self.configuration = configuration
        self.logger = logger
    }

    package func sender(topic: String, state: BuildState) async throws -> PushSender {
        if let client = clients[topic] { return PushSender(client: client, logger: logger) }
        let client = try APNsClient(identity: try identity(topic: topic, state: state), configuration: configuration)
        clients[topic] = client
        return PushSender(client: client, logger: logger)
    }

    package func shutdown() async {
        for client in clients.values { try? await client.shutdown() }
        clients.removeAll()
    }

    private func identity(topic: String, state: BuildState) throws -> APNsClientIdentity {
        let team = state.passes.values.first { $0.passTypeIdentifier == topic }?.teamIdentifier ?? ""
        let resolved: (identity: SigningIdentity, isDevelopment: Bool)
        do {
            resolved = try identities.signingIdentity(typeIdentifier: topic, teamIdentifier: team)
        } catch {
            throw PushIdentityError("cannot load the certificate for \(topic): \(error)")
        }
        guard !resolved.isDevelopment else {
            throw PushIdentityError("no Pass Type ID certificate is configured for \(topic) (the build used the development chain, which APNs refuses); set PASSFORGE_SIGNING_CERTIFICATE or `signing:` in passforge.yml")
        }
        // APNs takes the topic from the certificate: one for another pass type gets 403 for every push.
        guard resolved.identity.certificate.userID == topic else {
            throw PushIdentityError("the certificate configured for \(topic) is for \(resolved.identity.certificate.userID ?? "no pass type") (\(resolved.identity.certificate.subject)); APNs would refuse every push. Configure the Pass Type ID certificate of \(topic)")
        }
        guard resolved.identity.certificate.isValid(at: Date()) else {
            throw PushIdentityError("the certificate for \(topic) expired on \(resolved.identity.certificate.notAfter); renew it in the Apple Developer portal")
        }
        return APNsClientIdentity(certificateChainPEM: resolved.identity.certificatePEM + resolved.identity.wwdrCertificatePEM,
                                  privateKeyPEM: resolved.identity.exportPrivateKeyPEM())
    }
}
