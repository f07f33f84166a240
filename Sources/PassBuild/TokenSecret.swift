import AtomicFiles
import Crypto
import Foundation
import PassModel
import PassPackage
import WalletTree

/// The secret from which every pass's authenticationToken and download
/// capability are derived, so a build needs no database of tokens.
///
/// It must stay the same for the life of the passes: a device keeps the
/// token of a pass it holds, and Apple's web service protocol gives no way to
/// change it.
package struct TokenSecret: Sendable {
    let key: SymmetricKey
    /// An HMAC already keyed with the secret, copied for each message: keying
    /// hashes the padded key twice, as much work as the message itself.
    private let keyedMAC: HMAC<SHA256>
    /// Where the secret came from, for the build's summary (never the secret itself).
    package let origin: String

    package init(_ secret: String, origin: String) {
        self.key = SymmetricKey(data: Array(secret.utf8))
        self.keyedMAC = HMAC<SHA256>(key: key)
        self.origin = origin
    }

    /// `base64url(HMAC-SHA256(secret, passTypeIdentifier + "/" + serialNumber))`.
    package func authenticationToken(passTypeIdentifier: String, serialNumber: String) -> String {
        base64URL(mac(ItemKey.text(typeIdentifier: passTypeIdentifier, identifier: serialNumber)))
    }

    /// `base64url(HMAC-SHA256(secret, "download/" + type + "/" + serial))` cut to 22 characters.
    package func downloadCapability(passTypeIdentifier: String, serialNumber: String) -> String {
        // The HMAC input, fixed forever: a change would break every link.
        let input = "download/\(passTypeIdentifier)/\(serialNumber)"  // not a tree path
        return String(base64URL(mac(input)).prefix(22))
    }

    /// A hash that changes when the secret changes, for fingerprints; not reversible.
    package var fingerprint: String { Array(mac("passforge/secret-fingerprint")).hexString }

    private func mac(_ message: String) -> HMAC<SHA256>.MAC {
        var mac = keyedMAC
        mac.update(data: Array(message.utf8))
        return mac.finalize()
    }

    /// Reads PASSFORGE_TOKEN_SECRET; else the project's `.passforge/token-secret`,
    /// created once with random bytes. Under CI a missing secret is an error:
    /// a fresh random one would change every pass's token.
    package static func resolve(environment: [String: String], projectStateDirectory: String) throws -> TokenSecret {
        if let secret = environment["PASSFORGE_TOKEN_SECRET"], !secret.isEmpty {
            guard secret.utf8.count >= 16 else {
                throw BuildError(
                    .configuration,
                    "PASSFORGE_TOKEN_SECRET is shorter than 16 characters; use a long random value, e.g. `openssl rand -base64 32`"
                )
            }
            return TokenSecret(secret, origin: "PASSFORGE_TOKEN_SECRET")
        }
        let path = "\(projectStateDirectory)/token-secret"
        if let bytes = AtomicFileSystem.readFile(path),
            let secret = String(validating: bytes, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !secret.isEmpty
        {
            SecretFile.warnIfExposed(path, holding: "the token secret")
            return TokenSecret(secret, origin: path)
        }
        if environment["CI"] == "true" {
            throw BuildError(
                .configuration,
                "PASSFORGE_TOKEN_SECRET is not set. Under CI a random secret would change the token of every pass, and devices would lose their updates; set PASSFORGE_TOKEN_SECRET to the project's secret"
            )
        }
        let secret = base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        try AtomicFileSystem.write(Array((secret + "\n").utf8), to: path, permissions: 0o600)
        return TokenSecret(secret, origin: path)
    }
}

/// base64url without padding (RFC 4648 §5), written out: Foundation's
/// string replacing was a fifth of a large build's planning time.
func base64URL<D: ContiguousBytes>(_ bytes: D) -> String {
    bytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> String in
        let count = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { out in
            var written = 0
            func put(_ value: UInt32, _ shift: UInt32) {
                out[written] = base64URLAlphabet[Int(value >> shift & 63)]
                written += 1
            }
            var index = 0
            while index + 2 < input.count {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                put(value, 18)
                put(value, 12)
                put(value, 6)
                put(value, 0)
                index += 3
            }
            if input.count - index == 2 {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                put(value, 18)
                put(value, 12)
                put(value, 6)
            } else if input.count - index == 1 {
                let value = UInt32(input[index]) << 16
                put(value, 18)
                put(value, 12)
            }
            return written
        }
    }
}

private let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
