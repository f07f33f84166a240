import Crypto
import Foundation
import Synchronization

/// The `Authorization: Bearer <JWT>` of every DeviceCheck call, made once and
/// reused until it is due for renewal.
///
/// The token is the one APNs uses ("Establishing a token-based connection to
/// APNs", which DeviceCheck's documentation points to): a compact JWS signed
/// with ES256, header `{"alg":"ES256","kid":<key ID>}`, claims
/// `{"iss":<team ID>,"iat":<seconds>}`. Apple rejects an `iat` older than one
/// hour and asks not to make a new token more often than every 20 minutes, so
/// one token serves 50 minutes (`lifetime`).
package final class DeviceCheckAuthorization: Sendable {
    package typealias Clock = @Sendable () -> Int64

    private let credentials: DeviceCheckCredentials
    private let now: Clock
    private let lifetime: Int64
    private let current = Mutex<(token: String, issuedAt: Int64)?>(nil)

    /// - Parameters:
    ///   - now: seconds since 1970; tests pass their own clock.
    ///   - lifetime: how long one token is used, in seconds.
    package init(
        credentials: DeviceCheckCredentials, lifetime: Int64 = 50 * 60,
        now: @escaping Clock = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.credentials = credentials
        self.lifetime = lifetime
        self.now = now
    }

    /// The header's value: `Bearer <JWT>`.
    package func headerValue() throws(DeviceCheckError) -> String {
        "Bearer " + (try token())
    }

    /// The current token, made anew when it is older than `lifetime` (or the clock went back).
    package func token() throws(DeviceCheckError) -> String {
        let time = now()
        let result: Result<String, DeviceCheckError> = current.withLock { current in
            if let current, time >= current.issuedAt, time - current.issuedAt < lifetime {
                return .success(current.token)
            }
            guard let token = Self.makeToken(credentials: credentials, issuedAt: time) else {
                return .failure(
                    DeviceCheckError(.configuration, "cannot sign the DeviceCheck authorization token with the .p8 key")
                )
            }
            current = (token, time)
            return .success(token)
        }
        return try result.get()
    }

    static func makeToken(credentials: DeviceCheckCredentials, issuedAt: Int64) -> String? {
        // The IDs are checked to be [A-Z0-9]{10}: nothing in them needs JSON escaping.
        let header = #"{"alg":"ES256","kid":"\#(credentials.keyIdentifier)"}"#
        let claims = #"{"iss":"\#(credentials.teamIdentifier)","iat":\#(issuedAt)}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        // JWS ES256 (RFC 7518 §3.4): the signature is R || S, 32 bytes each, which is
        // swift-crypto's raw representation (not DER).
        guard let signature = try? credentials.privateKey.signature(for: Data(signingInput.utf8)) else { return nil }
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}

/// base64url without padding (RFC 7515 §2), as JWS writes it.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=", with: "")
    }

    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}

extension DeviceCheckClient {
    /// The SHA-256 of a device token, in hex: what passforge keeps of a token it sent to Apple, to refuse it
    /// if it comes again (Apple calls a token single-use), without keeping the token itself.
    package static func digest(ofDeviceToken token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
