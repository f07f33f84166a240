import DeviceCheck
import Foundation
import PassContent
import PassOffers
import PassServer
import RegistrationStore

/// DeviceCheck from passforge.yml's `deviceCheck:` and the environment, for
/// `serve` (offers) and `device-check` (by hand).
enum DeviceCheckSetup {
    /// The `.p8` key's path; overrides `deviceCheck.privateKey` (keep the key out of git).
    static let keyVariable = "PASSFORGE_DEVICECHECK_KEY"
    /// An extra CA to trust for DeviceCheck's HTTPS (a proxy's; tests' mock).
    static let caVariable = "PASSFORGE_DEVICECHECK_CA_CERTIFICATE"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A client for Apple's DeviceCheck service as passforge.yml and the environment set it up.
    static func client(
        configuration: ProjectConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> DeviceCheckClient {
        let file = configuration.file ?? "passforge.yml"
        guard let settings = configuration.deviceCheck else {
            throw Failure(
                description:
                    "\(file) has no deviceCheck: settings (teamIdentifier, keyIdentifier, privateKey); add them to use DeviceCheck"
            )
        }
        guard let keyPath = environment[keyVariable] ?? settings.privateKeyPath else {
            throw Failure(
                description:
                    "no DeviceCheck key: set \(keyVariable) to Apple's AuthKey_\(settings.keyIdentifier).p8, or deviceCheck.privateKey in \(file)"
            )
        }
        do {
            let credentials = try DeviceCheckCredentials(
                teamIdentifier: settings.teamIdentifier, keyIdentifier: settings.keyIdentifier,
                privateKeyPath: keyPath)
            let endpoint =
                try settings.baseURL.map { url throws(DeviceCheckError) in try DeviceCheckEndpoint(baseURL: url) }
                ?? DeviceCheckEndpoint(environment: settings.environment == "development" ? .development : .production)
            let http = try DeviceCheckClient.makeHTTPClient(additionalTrustRootPath: environment[caVariable])
            return DeviceCheckClient(
                endpoint: endpoint, authorization: DeviceCheckAuthorization(credentials: credentials), httpClient: http,
                ownsHTTPClient: true)
        } catch {
            throw Failure(description: "\(file): \(error.message)")
        }
    }

    /// The claim call of `serve`, or nil when passforge.yml defines no offers.
    static func offerEndpoint(
        configuration: ProjectConfiguration, store: any OfferClaimStore,
        claimsPerMinute: Int = OfferClaimEndpoint.defaultClaimsPerMinute,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> OfferClaimEndpoint? {
        guard !configuration.offers.isEmpty else { return nil }
        guard let webServiceURL = configuration.defaultValue("webServiceURL") else {
            throw Failure(
                description:
                    "\(configuration.file ?? "passforge.yml") defines offers but no webServiceURL: a claim answers with the pass's download link under it"
            )
        }
        let service = OfferClaimService(
            offers: configuration.offers.map { OfferDefinition(name: $0.name, bit: $0.bit) }, store: store,
            deviceCheck: try client(configuration: configuration, environment: environment))
        return OfferClaimEndpoint(service: service, downloadBaseURL: webServiceURL, claimsPerMinute: claimsPerMinute)
    }
}
