import Foundation

/// Bytes of a certificate, key or `.p12` file, with the path used to name it
/// in error messages.
package struct SigningFile: Sendable {
    /// Where the bytes came from; errors name it.
    package var path: String
    package var bytes: [UInt8]

    package init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    /// Reads the file at `path`.
    package init(contentsOf path: String) throws(SigningIdentityError) {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            self.init(path: path, bytes: [UInt8](data))
        } catch {
            throw .fileUnreadable(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}

/// Why a signing identity could not be loaded. Messages name the file and
/// say what to do; none contains a password.
package enum SigningIdentityError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The file could not be read at all.
    case fileUnreadable(path: String, reason: String)
    /// The signing certificate is neither PEM, DER nor a `.p12`.
    case notACertificate(path: String)
    /// The WWDR file holds no certificate.
    case wwdrNotACertificate(path: String)
    /// The key file holds no private key that OpenSSL can read.
    case notAPrivateKey(path: String, reason: String)
    /// The key or `.p12` is encrypted and no password was given.
    case passwordRequired(path: String, passwordSource: String)
    /// The password does not decrypt the key or `.p12`.
    case wrongPassword(path: String, passwordSource: String)
    /// The `.p12` could not be decrypted although the password is right
    /// (typically RC2/3DES without OpenSSL's legacy provider).
    case unsupportedPKCS12(path: String, reason: String)
    /// A certificate was given but no private key.
    case missingPrivateKey(certificatePath: String)
    /// The private key is not the key of the certificate.
    case keyDoesNotMatchCertificate(certificatePath: String, keyPath: String)
    /// No WWDR certificate was given, and none is bundled with the certificate.
    case missingWWDRCertificate(certificatePath: String)
    /// The WWDR certificate did not issue the signing certificate.
    case wwdrDidNotIssueCertificate(wwdrPath: String, certificatePath: String, certificateIssuer: String)
    /// OpenSSL failed for a reason other than the input (e.g. memory).
    case openSSLFailure(operation: String, reason: String)

    package var description: String {
        switch self {
        case .fileUnreadable(let path, let reason):
            return "cannot read \(path): \(reason); check the path and its permissions"
        case .notACertificate(let path):
            return "\(path) is not a certificate: expected PEM (-----BEGIN CERTIFICATE-----), DER, or a .p12 "
                + "holding the Pass Type ID certificate; point PASSFORGE_SIGNING_CERTIFICATE (or the "
                + "passforge.yml signing entry) at the certificate downloaded from developer.apple.com"
        case .wwdrNotACertificate(let path):
            return "\(path) is not a certificate: expected the Apple WWDR intermediate (G4) as PEM or DER; "
                + "download it from https://www.apple.com/certificateauthority/ and point "
                + "PASSFORGE_WWDR_CERTIFICATE at it"
        case .notAPrivateKey(let path, let reason):
            return "\(path) holds no private key that can be read (\(reason)); point PASSFORGE_SIGNING_KEY "
                + "at the PEM private key of the Pass Type ID certificate, or use a .p12 that holds both"
        case .passwordRequired(let path, let source):
            return "\(path) is encrypted; set \(source) to its password"
        case .wrongPassword(let path, let source):
            return "the password in \(source) does not open \(path); set \(source) to the password "
                + "the file was exported with"
        case .unsupportedPKCS12(let path, let reason):
            return "\(path) could not be decrypted (\(reason)); it probably uses legacy RC2/3DES "
                + "encryption and OpenSSL's legacy provider is not available. Re-export it with "
                + "modern encryption (openssl pkcs12 -export, OpenSSL 3), or use the PEM certificate and key"
        case .missingPrivateKey(let path):
            return "\(path) holds a certificate but no private key; set PASSFORGE_SIGNING_KEY to its "
                + "private key, or use a .p12 that holds both"
        case .keyDoesNotMatchCertificate(let certificatePath, let keyPath):
            return "the private key in \(keyPath) does not belong to the certificate in \(certificatePath); "
                + "use the key the certificate was requested with"
        case .missingWWDRCertificate(let path):
            return "no Apple WWDR intermediate certificate for \(path); download WWDR G4 from "
                + "https://www.apple.com/certificateauthority/ and set PASSFORGE_WWDR_CERTIFICATE to it"
        case .wwdrDidNotIssueCertificate(let wwdrPath, let certificatePath, let issuer):
            return "\(wwdrPath) did not issue \(certificatePath) (its issuer is \(issuer)); "
                + "set PASSFORGE_WWDR_CERTIFICATE to that intermediate (Pass Type ID certificates "
                + "issued after January 2022 chain to WWDR G4)"
        case .openSSLFailure(let operation, let reason):
            return "OpenSSL failed to \(operation): \(reason)"
        }
    }

    package var errorDescription: String? { description }
}

/// Why a signature could not be made.
package enum SigningError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    case openSSLFailure(operation: String, reason: String)

    package var description: String {
        switch self {
        case .openSSLFailure(let operation, let reason):
            return "signing failed: OpenSSL could not \(operation): \(reason)"
        }
    }

    package var errorDescription: String? { description }
}
