import Crypto
import Foundation
import PassModel

/// `manifest.json`: every file of a pass mapped to the lowercase hex SHA-1 of
/// its bytes, except `manifest.json` and `signature` themselves
/// (Apple, PassKit Package Format Reference, "Manifest"). SHA-1 is what Wallet checks; it is not a choice.
package struct Manifest: Sendable, Hashable {
    package static let fileName = "manifest.json"
    package static let signatureFileName = "signature"

    /// File path (forward slashes, relative to the pass root) → SHA-1 hex.
    package private(set) var hashes: [String: String]

    /// The manifest of `files`, keyed by their paths in the pass. Entries
    /// named `manifest.json` or `signature` are left out.
    package init(files: [String: [UInt8]]) {
        var hashes: [String: String] = [:]
        for (name, bytes) in files where !Self.isExcluded(name) {
            hashes[name] = Self.sha1Hex(bytes)
        }
        self.hashes = hashes
    }

    package init(hashes: [String: String]) {
        self.hashes = hashes
    }

    /// Parses a `manifest.json`.
    package init(jsonBytes: [UInt8]) throws(ManifestError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(jsonBytes))
        } catch {
            throw .notJSON(reason: (error as NSError).localizedDescription)
        }
        guard let dictionary = object as? [String: Any] else { throw .notAnObject }
        var hashes: [String: String] = [:]
        for (name, value) in dictionary {
            guard let hash = value as? String else { throw .valueNotAString(file: name) }
            hashes[name] = hash
        }
        self.hashes = hashes
    }

    /// The JSON bytes: one object, keys sorted by their UTF-8 bytes, no
    /// whitespace. The same manifest always gives the same bytes, so an
    /// unchanged pass has an unchanged manifest.
    package var jsonBytes: [UInt8] {
        Self.jsonBytes(
            sortedEntries: hashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                .map { (name: $0.key, hash: $0.value) })
    }

    /// The JSON bytes of a manifest whose entries are given sorted by their names' UTF-8 bytes, each
    /// name once: what `jsonBytes` gives for them. The packager calls it with each package's entries,
    /// without a dictionary.
    static func jsonBytes(sortedEntries entries: [(name: String, hash: String)]) -> [UInt8] {
        var json: [UInt8] = []
        // Quotes, a colon and a comma per entry; a few more bytes for an escaped name are added as needed.
        json.reserveCapacity(entries.reduce(2) { $0 + $1.name.utf8.count + $1.hash.utf8.count + 6 })
        json.append(UInt8(ascii: "{"))
        for (position, entry) in entries.enumerated() {
            if position > 0 { json.append(UInt8(ascii: ",")) }
            appendJSONString(entry.name, to: &json)
            json.append(UInt8(ascii: ":"))
            appendJSONString(entry.hash, to: &json)
        }
        json.append(UInt8(ascii: "}"))
        return json
    }

    /// Whether `name` is one of the two files a manifest never lists.
    package static func isExcluded(_ name: String) -> Bool {
        name == fileName || name == signatureFileName
    }

    /// Lowercase hex SHA-1 of `bytes`.
    package static func sha1Hex(_ bytes: [UInt8]) -> String {
        Insecure.SHA1.hash(data: bytes).hexString
    }

    /// The hash a manifest lists for each file: SHA-1 for a pass (PassKit
    /// Package Format Reference), SHA-256 for an order (Apple, "Building a
    /// distributable order package").
    package enum Digest: Sendable, Hashable {
        case sha1, sha256

        /// Lowercase hex of `bytes`' hash.
        package func hex(_ bytes: [UInt8]) -> String {
            switch self {
            case .sha1: Insecure.SHA1.hash(data: bytes).hexString
            case .sha256: SHA256.hash(data: bytes).hexString
            }
        }
    }

    private static func appendJSONString(_ string: String, to json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        // File names and hex hashes: nearly always nothing to escape, copied at once.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            json.append(contentsOf: string.utf8)
            json.append(UInt8(ascii: "\""))
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): json += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): json += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0..<0x20: json += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }
}

package enum ManifestError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    case notJSON(reason: String)
    case notAnObject
    case valueNotAString(file: String)

    package var description: String {
        switch self {
        case .notJSON(let reason): return "manifest.json is not valid JSON: \(reason)"
        case .notAnObject: return "manifest.json must be a JSON object of file name to SHA-1"
        case .valueNotAString(let file): return "manifest.json: the value for \"\(file)\" must be a SHA-1 hex string"
        }
    }

    package var errorDescription: String? { description }
}

/// The hash `manifest.json` lists for each file of a package: SHA-1 for a
/// pass, SHA-256 for an order (Apple, "Building a distributable order package").
extension WalletItemKind {
    package var digest: Manifest.Digest { self == .pass ? .sha1 : .sha256 }
}
