import Foundation
package import Logging
import PassModel
package import WalletTree

/// A pool of APNs clients, one group per topic (pass or order type: one or
/// more HTTP/2 connections, `APNsConfiguration.connectionsPerTopic`), each with the
/// Pass Type ID (or Order Type ID) certificate that signs that topic's items —
/// the same material the build signs with (passforge.yml `signing:`, keyed by
/// pass and order type identifiers, else PASSFORGE_SIGNING_*) — as its TLS
/// client identity. Apple's "Adding a Web Service to Update Passes": a pass
/// update notification uses the pass type identifier as its topic and the
/// Pass Type ID certificate for the connection. Orders alike: the order type
/// identifier is the topic ("Wallet Orders", register a device); Apple does not
/// say which credential, and the Order Type ID certificate is what peers use
/// (vapor-community/wallet).
package actor APNsClientPool: PushSenderProvider {
    private let identities: any APNsIdentityProvider
    private let configuration: APNsConfiguration
    private let logger: Logger
    private var clients: [String: APNsConnectionGroup] = [:]

    package init(
        identities: any APNsIdentityProvider, configuration: APNsConfiguration,
        logger: Logger = Logger(label: "passforge.apns")
    ) {
        self.identities = identities
        self.configuration = configuration
        self.logger = logger
    }

    package func sender(topic: String, index: PublishedIndex) async throws -> PushSender {
        if let group = clients[topic] { return PushSender(group: group, logger: logger) }
        let group = try APNsConnectionGroup(
            identity: try identity(topic: topic, index: index), configuration: configuration,
            count: configuration.connectionsPerTopic)
        clients[topic] = group
        return PushSender(group: group, logger: logger)
    }

    package func shutdown() async {
        for client in clients.values { try? await client.shutdown() }
        clients.removeAll()
    }

    private func identity(topic: String, index: PublishedIndex) throws -> APNsClientIdentity {
        let built = index.items.values.first { $0.typeIdentifier == topic }
        // A topic whose items were all removed is still pushed (their holders learn they are gone).
        let kind = index.kind(ofType: topic) ?? .pass
        let certificateName = kind.certificateName
        let certificate: APNsCertificate
        do {
            certificate = try identities.apnsCertificate(
                topic: topic, teamIdentifier: built?.teamIdentifier ?? "", kind: kind)
        } catch {
            throw PushRunError.unusableIdentity("cannot load the \(certificateName) for \(topic): \(error)")
        }
        guard !certificate.isDevelopment else {
            throw PushRunError.unusableIdentity(
                "no \(certificateName) is configured for \(topic) (the build used the development chain, which "
                    + "APNs refuses); set PASSFORGE_SIGNING_CERTIFICATE or `signing:` in passforge.yml")
        }
        // APNs takes the topic from the certificate's UID (the pass or order type identifier):
        // one for another type gets 403 for every push.
        guard certificate.userID == topic else {
            throw PushRunError.unusableIdentity(
                "the certificate configured for \(topic) is for "
                    + "\(certificate.userID ?? "no \(kind.noun) type") (\(certificate.subject)); "
                    + "APNs would refuse every push. Configure the \(certificateName) of \(topic)")
        }
        guard certificate.isValid(at: Date()) else {
            throw PushRunError.unusableIdentity(
                "the \(certificateName) for \(topic) expired on "
                    + "\(certificate.notAfter); renew it in the Apple Developer portal")
        }
        return APNsClientIdentity(
            certificateChainPEM: certificate.chainPEM, privateKeyPEM: certificate.privateKeyPEM, kind: kind)
    }
}
