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
        addLabel(label, count: bytes.count)
        hasher.update(data: bytes)
    }

    mutating func add(_ label: String, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            addLabel(label, count: utf8.count)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(utf8))
        }
    }

    /// The label, a zero byte and the length of what follows: no part can pass for another.
    private mutating func addLabel(_ label: String, count: Int) {
        var label = label
        label.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        var trailer = (UInt8(0), UInt64(count).littleEndian)
        withUnsafeBytes(of: &trailer.0) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: &trailer.1) { hasher.update(bufferPointer: $0) }
    }

    func finalize() -> String { hasher.finalize().hexString }
}
