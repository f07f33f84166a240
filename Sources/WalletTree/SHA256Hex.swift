import Crypto
package import Foundation
import PassModel

/// Lowercase hex SHA-256 of `bytes`: ETags, token hashes, fingerprints.
package func sha256Hex(_ bytes: some DataProtocol) -> String {
    SHA256.hash(data: bytes).hexString
}
