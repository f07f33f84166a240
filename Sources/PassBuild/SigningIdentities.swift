import Foundation
import PassContent
package import PassModel
package import PassPackage
import Synchronization
package import WalletTree

/// Finds the identity that signs each pass type: passforge.yml `signing:`
/// first, then the PASSFORGE_SIGNING_* environment, then (outside CI, or
/// with --development-signing) the development chain.
package final class SigningIdentities: Sendable {
    package struct Resolved: Sendable {
        package var identity: SigningIdentity
        package var isDevelopment: Bool
        /// Changes when the certificate, key or WWDR certificate changes.
        package var fingerprint: String
    }

    private let settings: BuildSettings
    /// Each identity resolved once; held while one is resolved.
    private let resolved = Mutex(Cache())

    /// Two strings rather than one joined: asked once per unchanged pass, a joined key is an allocation each time.
    private struct IdentityKey: Hashable {
        var passTypeIdentifier: String
        var teamIdentifier: String
        var kind: WalletItemKind
    }

    private struct Cache {
        var byType: [IdentityKey: Result<Resolved, BuildError>] = [:]
        /// The PASSFORGE_SIGNING_CERTIFICATE identity, loaded once for every type.
        var defaultIdentity: Result<Resolved, BuildError>?
    }

    package init(settings: BuildSettings) { self.settings = settings }

    var usedDevelopmentSigning: Bool {
        resolved.withLock { $0.byType.values.contains { (try? $0.get())?.isDevelopment == true } }
    }

    /// The identity for passes (or orders, `kind`) of `passTypeIdentifier` by team `teamIdentifier`.
    package func identity(passTypeIdentifier: String, teamIdentifier: String, kind: WalletItemKind = .pass) -> Result<
        Resolved, BuildError
    > {
        let key = IdentityKey(passTypeIdentifier: passTypeIdentifier, teamIdentifier: teamIdentifier, kind: kind)
        return resolved.withLock { cache in
            if let cached = cache.byType[key] { return cached }
            let result = resolve(
                passTypeIdentifier: passTypeIdentifier, teamIdentifier: teamIdentifier, kind: kind,
                defaultIdentity: &cache.defaultIdentity)
            cache.byType[key] = result
            return result
        }
    }

    /// The identity of `typeIdentifier` by team `teamIdentifier` (push's APNs client identity, through the command line).
    package func signingIdentity(typeIdentifier: String, teamIdentifier: String, kind: WalletItemKind) throws -> (
        identity: SigningIdentity, isDevelopment: Bool
    ) {
        let resolved = try identity(passTypeIdentifier: typeIdentifier, teamIdentifier: teamIdentifier, kind: kind)
            .get()
        return (resolved.identity, resolved.isDevelopment)
    }

    private var environment: [String: String] { settings.environment }

    private func resolve(
        passTypeIdentifier: String, teamIdentifier: String, kind: WalletItemKind,
        defaultIdentity: inout Result<Resolved, BuildError>?
    ) -> Result<Resolved, BuildError> {
        let password = environment["PASSFORGE_SIGNING_PASSWORD"]
        let wwdr = environment["PASSFORGE_WWDR_CERTIFICATE"].flatMap { $0.isEmpty ? nil : $0 }
        if let files = settings.configuration.signing[passTypeIdentifier] {
            return load(
                certificate: files.certificate, key: files.key, password: password, wwdr: wwdr,
                origin: "signing: \(passTypeIdentifier) in \(settings.configuration.file ?? "passforge.yml")")
        }
        if let certificate = environment["PASSFORGE_SIGNING_CERTIFICATE"], !certificate.isEmpty {
            if defaultIdentity == nil {
                defaultIdentity = load(
                    certificate: certificate,
                    key: environment["PASSFORGE_SIGNING_KEY"].flatMap { $0.isEmpty ? nil : $0 },
                    password: password, wwdr: wwdr, origin: "PASSFORGE_SIGNING_CERTIFICATE")
            }
            return defaultIdentity!
        }
        if settings.isCI && !settings.allowsDevelopmentSigning {
            return .failure(
                BuildError(
                    .configuration,
                    "no signing certificate is configured, and CI=true. Set PASSFORGE_SIGNING_CERTIFICATE (and PASSFORGE_SIGNING_KEY, PASSFORGE_SIGNING_PASSWORD, PASSFORGE_WWDR_CERTIFICATE), or pass --development-signing to build passes that will not install on a device"
                ))
        }
        do {
            let pki = DevelopmentPKI(directory: "\(settings.projectStateDirectory)/dev-pki")
            let identity = try pki.identity(
                passTypeIdentifier: passTypeIdentifier, teamIdentifier: teamIdentifier, kind: kind)
            return .success(Resolved(identity: identity, isDevelopment: true, fingerprint: identity.fingerprint))
        } catch {
            return .failure(
                BuildError(
                    .configuration,
                    "cannot create the development signing chain in \(settings.projectStateDirectory)/dev-pki: \(error)"
                ))
        }
    }

    private func load(certificate: String, key: String?, password: String?, wwdr: String?, origin: String) -> Result<
        Resolved, BuildError
    > {
        do {
            let identity = try SigningIdentity(
                certificatePath: certificate, keyPath: key, password: password, wwdrCertificatePath: wwdr)
            return .success(Resolved(identity: identity, isDevelopment: false, fingerprint: identity.fingerprint))
        } catch {
            return .failure(BuildError(.configuration, "\(origin): \(error)"))
        }
    }
}
