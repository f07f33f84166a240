import Crypto
import Foundation
import PassPackage

/// Lowercase hex SHA-256 of `bytes`.
func sha256Hex(_ bytes: some DataProtocol) -> String {
    SHA256.hash(data: bytes).hexString
}

/// Builds a SHA-256 over several labelled parts, unambiguously.
struct FingerprintHasher {
    private var hasher = SHA256()

    mutating func add(_ label: String, _ bytes: some DataProtocol) {
        var length = UInt64(bytes.count).littleEndian
        hasher.update(data: Array(label.utf8) + [0])
        withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
        hasher.update(data: bytes)
    }

    mutating func add(_ label: String, _ text: String) { add(label, Array(text.utf8)) }

    func finalize() -> String { hasher.finalize().hexString }
}
