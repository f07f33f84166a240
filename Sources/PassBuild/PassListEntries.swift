import Crypto
import PassModel
import PassPackage
import WalletTree

/// A YAML content file with `passes:` (or `orders:`), cut by lines into its header (all
/// before `passes:`) and its entries, each hashed, so that a build after a
/// change to a few entries parses only those: a file of 100,000 entries
/// takes seconds to parse whole.
///
/// Only a plain layout is cut: `passes:` alone on its line at the left
/// margin, each entry a `- ` at one indentation with everything of it
/// indented further, no tabs in indentation, no anchors or aliases (which
/// could tie one entry to another), and nothing after the list. Any other
/// file is parsed whole, as before.
struct PassListEntries: Sendable {
    /// Hex digits kept of each SHA-256: 128 bits.
    static let hashLength = 32

    /// Byte ranges: the header, the `passes:` line, and each entry (from its
    /// `- ` line to the next entry's); lines in between belong to the entry before.
    let header: Range<Int>
    let passesLine: Range<Int>
    let entries: [Range<Int>]
    /// The 1-based line of the file where each entry starts, and that of `passes:`.
    let entryLines: [Int]
    let passesLineNumber: Int
    /// The header's hash followed by every entry's, `hashLength` hex digits each.
    let signature: String

    init?(_ bytes: [UInt8]) {
        var lines: [Range<Int>] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            lines.append(start..<index + 1)
            start = index + 1
        }
        if start < bytes.count { lines.append(start..<bytes.count) }

        func text(_ line: Range<Int>) -> ArraySlice<UInt8> {
            var end = line.upperBound
            while end > line.lowerBound, [0x0A, 0x0D, 0x20].contains(bytes[end - 1]) { end -= 1 }
            return bytes[line.lowerBound..<end]
        }
        // `orders:` is the same list for orders.
        guard
            let passesIndex = lines.firstIndex(where: {
                text($0).elementsEqual("passes:".utf8) || text($0).elementsEqual("orders:".utf8)
            })
        else { return nil }
        let headerBytes = bytes[0..<lines[passesIndex].lowerBound]
        // A `bundle:` or anchors in the header could mean more than its bytes for the entries.
        guard !Self.contains(headerBytes, "bundle"), !Self.hasAnchorOrAlias(headerBytes) else { return nil }

        var entries: [Range<Int>] = []
        var entryLines: [Int] = []
        var indent: Int?
        for lineIndex in (passesIndex + 1)..<lines.count {
            let line = lines[lineIndex]
            let content = text(line)
            let spaces = content.prefix(while: { $0 == 0x20 }).count
            guard spaces < content.count else { continue }  // blank
            let first = content[content.startIndex + spaces]
            if first == 0x09 { return nil }
            if first == UInt8(ascii: "#"), entries.isEmpty { continue }
            let isEntryStart =
                first == UInt8(ascii: "-")
                && (spaces + 1 == content.count || content[content.startIndex + spaces + 1] == 0x20)
            if indent == nil {
                guard isEntryStart else { return nil }
                indent = spaces
            }
            if isEntryStart, spaces == indent {
                entries.append(line)
                entryLines.append(lineIndex + 1)
            } else if spaces > indent! || first == UInt8(ascii: "#") {
                entries[entries.count - 1] = entries[entries.count - 1].lowerBound..<line.upperBound
            } else {
                return nil
            }
        }
        guard !entries.isEmpty else { return nil }
        // Blank lines after an entry belong to it; the last one runs to the end of the file.
        for index in entries.indices {
            entries[index] =
                entries[index].lowerBound..<(index + 1 < entries.count ? entries[index + 1].lowerBound : bytes.count)
        }
        guard !entries.contains(where: { Self.hasAnchorOrAlias(bytes[$0]) }) else { return nil }

        header = 0..<lines[passesIndex].lowerBound
        passesLine = lines[passesIndex]
        self.entries = entries
        self.entryLines = entryLines
        passesLineNumber = passesIndex + 1
        var signature = Self.hash(headerBytes)
        signature.reserveCapacity((entries.count + 1) * Self.hashLength)
        for entry in entries { signature += Self.hash(bytes[entry]) }
        self.signature = signature
    }

    var headerHash: Substring { signature.prefix(Self.hashLength) }

    /// The hash of each entry, in order.
    var entryHashes: [Substring] { Self.hashes(in: signature).dropFirst().map { $0 } }

    /// The hashes a signature is made of: the header's, then each entry's.
    static func hashes(in signature: String) -> [Substring] {
        var hashes: [Substring] = []
        var start = signature.startIndex
        while start < signature.endIndex {
            let end = signature.index(start, offsetBy: hashLength, limitedBy: signature.endIndex) ?? signature.endIndex
            hashes.append(signature[start..<end])
            start = end
        }
        return hashes
    }

    /// The file with only the entries at `kept` left; every other line is
    /// emptied, so that line numbers in diagnostics stay those of the file.
    func document(keeping kept: Set<Int>, of bytes: [UInt8]) -> [UInt8] {
        var out = Array(bytes[header])
        out += bytes[passesLine]
        var lineStart = passesLine.upperBound
        // Lines between `passes:` and the first entry (blank or comments).
        for byte in bytes[lineStart..<(entries.first?.lowerBound ?? lineStart)] where byte == 0x0A { out.append(0x0A) }
        for (index, entry) in entries.enumerated() {
            if kept.contains(index) {
                out += bytes[entry]
            } else {
                for byte in bytes[entry] where byte == 0x0A { out.append(0x0A) }
            }
            lineStart = entry.upperBound
        }
        return out
    }

    /// The header, the `passes:` line and the entries at `range`, to parse with
    /// `ContentLoader.definitions(in:excerpt:firstEntry:excerptEntryLine:entryLine:)`:
    /// what it needs to give every location its line in the file.
    func excerpt(_ range: Range<Int>, of bytes: [UInt8]) -> (bytes: [UInt8], excerptEntryLine: Int, entryLine: Int) {
        var out: [UInt8] = []
        out.reserveCapacity(
            passesLine.upperBound + entries[range.upperBound - 1].upperBound - entries[range.lowerBound].lowerBound)
        out += bytes[0..<passesLine.upperBound]
        out += bytes[entries[range.lowerBound].lowerBound..<entries[range.upperBound - 1].upperBound]
        return (out, passesLineNumber + 1, entryLines[range.lowerBound])
    }

    private static func hash(_ bytes: ArraySlice<UInt8>) -> String {
        String(SHA256.hash(data: bytes).hexString.prefix(hashLength))
    }

    private static func contains(_ bytes: ArraySlice<UInt8>, _ word: String) -> Bool {
        let word = Array(word.utf8)
        guard bytes.count >= word.count else { return false }
        var index = bytes.startIndex
        while index + word.count <= bytes.endIndex {
            if bytes[index..<index + word.count].elementsEqual(word) { return true }
            index += 1
        }
        return false
    }

    /// `&name` or `*name` anywhere (in a quoted string too: such an entry is only parsed, never wrong).
    private static func hasAnchorOrAlias(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "*") {
                let next = bytes[index + 1]
                if (0x30...0x39).contains(next) || (0x41...0x5A).contains(next) || (0x61...0x7A).contains(next)
                    || next == UInt8(ascii: "_")
                {
                    return true
                }
            }
            index += 1
        }
        return false
    }
}
