import AtomicFiles
package import Crypto
import Foundation

/// What signs the calls to Apple's DeviceCheck service: the team, the ID of
/// the key, and the key itself (Apple's `.p8` file: a PKCS#8 PEM holding an
/// EC P-256 private key, from Certificates, IDs & Profiles › Keys with
/// DeviceCheck enabled).
package struct DeviceCheckCredentials: Sendable {
    package var teamIdentifier: String
    package var keyIdentifier: String
    let privateKey: P256.Signing.PrivateKey

    /// - Throws: `DeviceCheckError` of kind `.configuration`, naming what is
    ///   wrong and never quoting the key.
    package init(teamIdentifier: String, keyIdentifier: String, privateKeyPEM: String) throws(DeviceCheckError) {
        // Apple's team and key IDs are 10 upper-case letters and digits.
        for (name, value) in [("teamIdentifier", teamIdentifier), ("keyIdentifier", keyIdentifier)] {
            guard value.utf8.count == 10, value.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) })
            else {
                throw DeviceCheckError(
                    .configuration,
                    "deviceCheck.\(name) \(value.debugDescription) is not a 10-character Apple ID (A-Z, 0-9)")
            }
        }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) else {
            throw DeviceCheckError(
                .configuration,
                "the DeviceCheck key is not a PEM P-256 private key (Apple's "
                    + "AuthKey_\(keyIdentifier).p8: \"BEGIN PRIVATE KEY\")")
        }
        self.teamIdentifier = teamIdentifier
        self.keyIdentifier = keyIdentifier
        self.privateKey = key
    }

    /// Reads the `.p8` file at `path`.
    package init(teamIdentifier: String, keyIdentifier: String, privateKeyPath: String) throws(DeviceCheckError) {
        // Apple's .p8 is a few hundred bytes; anything near 64 KiB is not one, and is not read whole.
        guard let bytes = try? AtomicFileSystem.readFile(privateKeyPath, limit: 64 * 1024 - 1),
            let pem = String(validating: bytes, as: UTF8.self)
        else {
            throw DeviceCheckError(
                .configuration,
                "cannot read the DeviceCheck key \(privateKeyPath); set deviceCheck.privateKey or "
                    + "PASSFORGE_DEVICECHECK_KEY to Apple's AuthKey_\(keyIdentifier).p8")
        }
        SecretFile.warnIfExposed(privateKeyPath, holding: "the DeviceCheck key")
        try self.init(teamIdentifier: teamIdentifier, keyIdentifier: keyIdentifier, privateKeyPEM: pem)
    }

    /// The public half, to verify a token (the tests' mock of Apple does).
    package var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
}
