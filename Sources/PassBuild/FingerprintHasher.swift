import Crypto
import Foundation
import PassModel
import PassPackage
import WalletTree

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
    /// One update for the three (every unchanged pass's fingerprint is checked on each build).
    private mutating func addLabel(_ label: String, count: Int) {
        var label = label
        label.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(byteCount: utf8.count + 9, alignment: 1) { buffer in
                buffer.copyMemory(from: UnsafeRawBufferPointer(utf8))
                buffer[utf8.count] = 0
                withUnsafeBytes(of: UInt64(count).littleEndian) { length in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[(utf8.count + 1)...]).copyMemory(from: length)
                }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
            }
        }
    }

    func finalize() -> String { hasher.finalize().hexString }
}
