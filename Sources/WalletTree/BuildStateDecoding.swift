import ConcurrencySupport
import PassModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads `state.json` straight from its bytes into a `BuildState`, on every
/// core: a 100,000-pass state is about 70 MB, and going through a general
/// JSON tree first takes seconds and several times its size in memory.
///
/// One scan finds each pass record's bytes; the records are then decoded in
/// parallel. Any valid JSON is accepted (whitespace, escapes, key order,
/// unknown keys), not only what `BuildStateEncoding` writes. Values repeated
/// from one record to the next (pass type, team, template, source file of a
/// list) share one string.
package enum BuildStateDecoding {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        /// The state version the file has, when it is one this version does not read.
        package var version: Int? = nil
    }

    /// The state, and where each pass record's bytes are in `bytes` (by key,
    /// in file order): a record carried over unchanged is written back from them.
    package static func decode(_ bytes: [UInt8], jobs: Int) throws(Failure) -> (
        state: BuildState, recordRanges: [(key: String, range: Range<Int>)]
    ) {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in try decode(buffer: buffer, jobs: jobs) }
    }

    /// `decode(_:jobs:)` of bytes that stay valid during the call (a file mapped into memory, say).
    package static func decode(buffer: UnsafeBufferPointer<UInt8>, jobs: Int) throws(Failure)
        -> (state: BuildState, recordRanges: [(key: String, range: Range<Int>)])
    {
        let bytes = StateBytes(buffer: buffer)
        var state = BuildState()
        var passMembers: [(key: String, range: Range<Int>)] = []
        var fileMembers: [(key: String, range: Range<Int>)] = []
        var removedMembers: [(key: String, range: Range<Int>)] = []
        var sawVersion = false
        do {
            var scanner = JSONScanner(buffer)
            var expected = 0
            try scanner.objectWithRawKeys { scanner, key throws(Failure) in
                guard let (field, index) = StateField.field(named: key, expected: expected) else {
                    return try scanner.skipValue()
                }
                expected = index + 1
                switch field {
                case .version:
                    state.version = try scanner.integer()
                    sawVersion = true
                case .lastUpdateTag: state.lastUpdateTag = Int64(try scanner.integer())
                case .builtAt: state.builtAt = try scanner.string()
                case .passes: passMembers = try scanner.members()
                case .contentFiles: fileMembers = try scanner.members()
                case .removedPasses: removedMembers = try scanner.members()
                }
            }
            try scanner.finish()
        }
        guard sawVersion else { throw Failure(description: "no version") }
        guard state.version == BuildState.currentVersion else { return (state, []) }

        // A content file's keys are the strings of the pass records' keys: one string for both, and looking a pass up
        // by its file's key finds the same string, not an equal one (no bytes compared).
        let files = try decodeMembers(fileMembers, in: bytes, jobs: jobs, passKeys: passMembers) {
            scanner, shared throws(Failure) in try decodeContentFile(&scanner, sharing: &shared)
        }
        // The content files' dictionary is built while the passes are decoded, on a thread of its own.
        let contentFiles = Mutex<[String: BuildState.ContentFileRecord]>([:])
        let buildContentFiles: @Sendable () -> Void = { [fileMembers] in
            var dictionary: [String: BuildState.ContentFileRecord] = [:]
            dictionary.reserveCapacity(fileMembers.count)
            for (member, file) in zip(fileMembers, files.joined()) { dictionary[member.key] = file }
            contentFiles.withLock { $0 = dictionary }
        }
        state.removedPasses = try decodeRemovedRecords(removedMembers, in: buffer)
        var passes = try decodeMembers(passMembers, in: bytes, jobs: jobs, alongside: buildContentFiles) {
            scanner, last throws(Failure) in
            try BuildState.ItemRecord(scanner: &scanner, sharing: &last)
        }
        state.contentFiles = contentFiles.withLock { files in
            defer { files = [:] }  // the state's the only reference: changed in place later
            return files
        }
        state.passes.reserveCapacity(passMembers.count)
        var member = 0
        for index in passes.indices {
            for record in passes[index] {
                state.passes[passMembers[member].key] = record
                member += 1
            }
            passes[index] = []
        }
        return (state, passMembers)
    }

    /// One `contentFiles` member's record; its pass keys are the pass records' own strings (`shared`).
    static func decodeContentFile(_ scanner: inout JSONScanner, sharing shared: inout SharedStrings)
        throws(Failure) -> BuildState.ContentFileRecord
    {
        var hash: PackedDigest?
        var keys: [String]?
        var stamp: String?
        var entries: String?
        var expected = 0
        try scanner.objectWithRawKeys { scanner, key throws(Failure) in
            guard let (field, index) = ContentFileField.field(named: key, expected: expected) else {
                return try scanner.skipValue()
            }
            expected = index + 1
            switch field {
            case .hash: hash = try scanner.digest()
            case .passes: keys = try scanner.passKeyArray(&shared)
            case .stamp: stamp = try scanner.optionalString()
            case .entries: entries = try scanner.optionalString()
            }
        }
        guard let hash, let keys else { throw Failure(description: "a content file is incomplete") }
        return BuildState.ContentFileRecord(hash: hash, passes: keys, stamp: stamp, entries: entries)

    }

    /// The `removedPasses` members' records, by key.
    static func decodeRemovedRecords(
        _ members: [(key: String, range: Range<Int>)], in buffer: UnsafeBufferPointer<UInt8>
    )
        throws(Failure) -> [String: BuildState.RemovedItemRecord]
    {
        var records: [String: BuildState.RemovedItemRecord] = [:]
        for member in members {
            var scanner = JSONScanner(buffer, range: member.range)
            let record = try RemovedRecordFields(scanner: &scanner, member: member.key)
            records[member.key] = .init(
                typeIdentifier: record.key.typeIdentifier, identifier: record.key.identifier,
                tokenHash: record.tokenHash, removedTag: record.removedTag, files: record.files,
                kind: record.key.kind)
        }
        return records
    }

    /// Decodes each member's value on `jobs` threads: the values in order, in chunks.
    /// `alongside`, when given, runs on one of the threads too, first (and always, even when decoding fails).
    static func decodeMembers<Value: Sendable>(
        _ members: [(key: String, range: Range<Int>)], in bytes: StateBytes, jobs: Int,
        passKeys: [(key: String, range: Range<Int>)] = [],
        alongside: (@Sendable () -> Void)? = nil,
        _ decode: @Sendable (inout JSONScanner, inout SharedStrings) throws(Failure) -> Value
    ) throws(Failure) -> [[Value]] {
        let chunk = 2048
        let chunks = (members.count + chunk - 1) / chunk
        let ranges = members.map(\.range)
        // Item -1 is the work alongside.
        let items = alongside == nil ? Array(0..<chunks) : Array(-1..<chunks)
        let results = ParallelLoop.map(items, jobs: jobs) { index -> Result<[Value], Failure> in
            if index < 0 {
                alongside?()
                return .success([])
            }
            var shared = SharedStrings(passKeys: passKeys)
            var values: [Value] = []
            values.reserveCapacity(chunk)
            for range in ranges[index * chunk..<min(ranges.count, (index + 1) * chunk)] {
                var scanner = JSONScanner(bytes.buffer, range: range)
                do throws(Failure) { values.append(try decode(&scanner, &shared)) } catch { return .failure(error) }
            }
            return .success(values)
        }
        var chunked: [[Value]] = []
        chunked.reserveCapacity(results.count)
        for result in results.dropFirst(alongside == nil ? 0 : 1) {
            switch result {
            case .success(let part): chunked.append(part)
            case .failure(let error): throw error
            }
        }
        return chunked
    }
}

/// The bytes being decoded, shared by the threads that decode them: they only read them, and the bytes outlive them.
package struct StateBytes: @unchecked Sendable {
    package let buffer: UnsafeBufferPointer<UInt8>
}

/// The last value of each repeated field, so that equal bytes give the same
/// string storage instead of a new copy per record.
package struct SharedStrings {
    private var last: [String] = Array(repeating: "", count: 4)
    /// The keys of the pass records, in file order (sorted, as the build writes them), and where the next is looked for first.
    private let passKeys: [(key: String, range: Range<Int>)]
    private var passKeyCursor = 0

    package init(passKeys: [(key: String, range: Range<Int>)] = []) { self.passKeys = passKeys }

    /// The pass record key spelled `bytes`, when there is one; else a new string. Content files list their passes
    /// mostly in the order of the keys: each is first compared with the one after the last found, then looked for
    /// by bisection (which finds nothing, harmlessly, should the keys not be sorted).
    package mutating func passKey(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        func compare(_ index: Int) -> Int32 {
            var key = passKeys[index].key
            return key.withUTF8 { key in
                let common = min(key.count, bytes.count)
                let order = common == 0 ? 0 : memcmp(key.baseAddress!, bytes.baseAddress!, common)
                return order != 0 ? order : key.count < bytes.count ? -1 : key.count > bytes.count ? 1 : 0
            }
        }
        if passKeyCursor < passKeys.count, compare(passKeyCursor) == 0 {
            passKeyCursor += 1
            return passKeys[passKeyCursor - 1].key
        }
        var (low, high) = (0, passKeys.count)
        while low < high {
            let middle = (low + high) / 2
            if compare(middle) < 0 { low = middle + 1 } else { high = middle }
        }
        guard low < passKeys.count, compare(low) == 0 else { return String(decoding: bytes, as: UTF8.self) }
        passKeyCursor = low + 1
        return passKeys[low].key
    }

    package mutating func string(_ slot: Int, _ scanner: inout JSONScanner) throws(BuildStateDecoding.Failure) -> String
    {
        guard let raw = scanner.plainString() else {
            let value = try scanner.string()
            if value != last[slot] { last[slot] = value }
            return last[slot]
        }
        let same = last[slot].withUTF8 { previous in
            previous.count == raw.count
                && (raw.isEmpty || memcmp(previous.baseAddress!, raw.baseAddress!, raw.count) == 0)
        }
        if !same { last[slot] = String(decoding: raw, as: UTF8.self) }
        return last[slot]
    }
}

extension JSONScanner {
    /// `"pass"` or `"order"`; anything else is not a build state this version wrote.
    mutating func itemKind() throws(Failure) -> WalletItemKind {
        let text = try string()
        guard let kind = WalletItemKind(rawValue: text) else {
            throw Failure(description: "kind \(text) is neither pass nor order")
        }
        return kind
    }
}

/// A forward-only reader of JSON bytes: exactly the few shapes a build state has.
package struct JSONScanner {
    package typealias Failure = BuildStateDecoding.Failure
    /// Valid while the scanner is used: scanners live inside `withUnsafeBufferPointer`.
    private let base: UnsafePointer<UInt8>?
    private var position: Int
    private let end: Int

    /// A scanner over `range` of `buffer` (all of it by default).
    package init(_ buffer: UnsafeBufferPointer<UInt8>, range: Range<Int>? = nil) {
        base = buffer.baseAddress
        position = range?.lowerBound ?? 0
        end = range?.upperBound ?? buffer.count
    }

    private func byte(_ index: Int) -> UInt8 { base![index] }

    private func fail(_ expected: String) -> Failure {
        Failure(
            description: position < end
                ? "expected \(expected) at byte \(position)" : "unexpected end, expected \(expected)")
    }

    private mutating func skipWhitespace() {
        while position < end {
            switch byte(position) {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ character: UInt8, _ name: String) throws(Failure) {
        skipWhitespace()
        guard position < end, byte(position) == character else { throw fail(name) }
        position += 1
    }

    /// Whether the next value is `character` (consumed if so).
    private mutating func consume(_ character: UInt8) -> Bool {
        skipWhitespace()
        if position < end, byte(position) == character {
            position += 1
            return true
        }
        return false
    }

    package mutating func finish() throws(Failure) {
        skipWhitespace()
        guard position == end else { throw fail("the end of the file") }
    }

    /// Calls `member` for each key of an object; it must read the key's value.
    package mutating func object(_ member: (inout JSONScanner, String) throws(Failure) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "{"), "{")
        if consume(UInt8(ascii: "}")) { return }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"), ":")
            try member(&self, key)
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"), "} or ,")
    }

    /// `object`, with each key as its bytes (valid during the call) instead of a String.
    package mutating func objectWithRawKeys(
        _ member: (inout JSONScanner, UnsafeBufferPointer<UInt8>) throws(Failure) -> Void
    ) throws(Failure) {
        try expect(UInt8(ascii: "{"), "{")
        if consume(UInt8(ascii: "}")) { return }
        repeat {
            if let key = plainString() {
                try expect(UInt8(ascii: ":"), ":")
                try member(&self, key)
            } else {
                let key = Array(try string().utf8)
                try expect(UInt8(ascii: ":"), ":")
                let failure: Failure? = key.withUnsafeBufferPointer { key in
                    do throws(Failure) { try member(&self, key) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            }
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"), "} or ,")
    }

    /// An object's keys with the byte range of each value, values skipped.
    package mutating func members() throws(Failure) -> [(key: String, range: Range<Int>)] {
        var members: [(key: String, range: Range<Int>)] = []
        try object { scanner, key throws(Failure) in
            scanner.skipWhitespace()
            let start = scanner.position
            try scanner.skipValue()
            members.append((key, start..<scanner.position))
        }
        return members
    }

    package mutating func integer() throws(Failure) -> Int {
        skipWhitespace()
        var negative = false
        if position < end, byte(position) == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let start = position
        var value = 0
        while position < end, case let digit = byte(position), digit >= 0x30, digit <= 0x39 {
            let (product, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = product.addingReportingOverflow(Int(digit - 0x30))
            guard !overflow, !carry else { throw fail("a smaller number") }
            value = sum
            position += 1
        }
        guard position > start else { throw fail("a number") }
        if position < end, case let next = byte(position), next == UInt8(ascii: ".") || next | 0x20 == UInt8(ascii: "e")
        {
            throw fail("a whole number")
        }
        return negative ? -value : value
    }

    /// The bytes of the next value, read, when it is a string without escapes;
    /// else nil, and the scanner does not move.
    package mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        var index = position
        while index < end, case let current = byte(index),
            current == 0x20 || current == 0x09 || current == 0x0A || current == 0x0D
        { index += 1 }
        guard index < end, byte(index) == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        let cursor = quoteOrBackslash(from: start)
        guard cursor < end, byte(cursor) == UInt8(ascii: "\"") else { return nil }
        position = cursor + 1
        return UnsafeBufferPointer(start: base! + start, count: cursor - start)
    }

    /// Where the first quote or backslash from `start` is (`end` or past it when there is none), found eight bytes
    /// at a time: values are short, and one pass over them beats a memchr call for each of the two.
    private func quoteOrBackslash(from start: Int) -> Int {
        var cursor = start
        while cursor + 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(base! + cursor).loadUnaligned(as: UInt64.self))
            let found = Self.zeroBytes(word ^ 0x2222_2222_2222_2222) | Self.zeroBytes(word ^ 0x5C5C_5C5C_5C5C_5C5C)
            if found != 0 { return cursor + found.trailingZeroBitCount / 8 }
            cursor += 8
        }
        while cursor < end, case let current = byte(cursor), current != UInt8(ascii: "\""),
            current != UInt8(ascii: "\\")
        { cursor += 1 }
        return cursor
    }

    /// The high bit of each zero byte of `word` set, and no other bit below the lowest such one
    /// (bits above it may be set by the borrow: only its position counts).
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    package mutating func string() throws(Failure) -> String {
        if let plain = plainString() { return String(decoding: plain, as: UTF8.self) }
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        while position < end {
            let current = byte(position)
            if current == UInt8(ascii: "\"") {
                let value = String(
                    decoding: UnsafeBufferPointer(start: base! + start, count: position - start), as: UTF8.self)
                position += 1
                return value
            }
            if current == UInt8(ascii: "\\") {
                position = start
                return try escapedString()
            }
            position += 1
        }
        throw fail("the end of a string")
    }

    private mutating func escapedString() throws(Failure) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(64)
        while position < end {
            // Each run of plain bytes at once (an ETag is a hash between two escaped quotes).
            let run = position
            while position < end, case let current = byte(position), current != UInt8(ascii: "\""),
                current != UInt8(ascii: "\\")
            { position += 1 }
            if position > run {
                utf8.append(contentsOf: UnsafeBufferPointer(start: base! + run, count: position - run))
            }
            guard position < end else { break }
            let current = byte(position)
            position += 1
            switch current {
            case UInt8(ascii: "\""): return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < end else { throw fail("an escape") }
                let escape = byte(position)
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), position + 1 < end, byte(position) == UInt8(ascii: "\\"),
                        byte(position + 1) == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try hex4()
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    utf8 += String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8
                default: throw fail("a valid escape")
                }
            default: utf8.append(current)
            }
        }
        throw fail("the end of a string")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard position + 4 <= end else { throw fail("four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit = byte(position)
            position += 1
            switch digit {
            case 0x30...0x39: value = value << 4 | UInt32(digit - 0x30)
            case 0x61...0x66: value = value << 4 | UInt32(digit - 0x61 + 10)
            case 0x41...0x46: value = value << 4 | UInt32(digit - 0x41 + 10)
            default: throw fail("a hex digit")
            }
        }
        return value
    }

    /// A string as a `PackedDigest`, made from its bytes when it has no escapes.
    package mutating func digest() throws(Failure) -> PackedDigest {
        skipWhitespace()
        // An ETag, as the build writes it: "\"<32 hex digits>\"".
        if end - position >= 38, byte(position) == UInt8(ascii: "\""), byte(position + 1) == UInt8(ascii: "\\"),
            byte(position + 2) == UInt8(ascii: "\""), byte(position + 35) == UInt8(ascii: "\\"),
            byte(position + 36) == UInt8(ascii: "\""),
            byte(position + 37) == UInt8(ascii: "\""),
            let etag = PackedDigest(quoting: UnsafeBufferPointer(start: base! + position + 3, count: 32))
        {
            position += 38
            return etag
        }
        if let plain = plainString() { return PackedDigest(utf8: plain) }
        return PackedDigest(try string())
    }

    /// A digest, or nil for `null`.
    package mutating func optionalDigest() throws(Failure) -> PackedDigest? {
        if isNull() { return nil }
        return try digest()
    }

    /// A string, or nil for `null`.
    package mutating func optionalString() throws(Failure) -> String? {
        if isNull() { return nil }
        return try string()
    }

    /// `stringArray`, with each string without escapes given by `shared.passKey`.
    package mutating func passKeyArray(_ shared: inout SharedStrings) throws(Failure) -> [String] {
        if isNull() { return [] }
        try expect(UInt8(ascii: "["), "[")
        var values: [String] = []
        if consume(UInt8(ascii: "]")) { return values }
        repeat {
            if let plain = plainString() { values.append(shared.passKey(plain)) } else { values.append(try string()) }
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"), "] or ,")
        return values
    }

    package mutating func stringArray() throws(Failure) -> [String] {
        if isNull() { return [] }
        try expect(UInt8(ascii: "["), "[")
        var values: [String] = []
        if consume(UInt8(ascii: "]")) { return values }
        repeat { values.append(try string()) } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"), "] or ,")
        return values
    }

    private mutating func isNull() -> Bool {
        skipWhitespace()
        guard position + 4 <= end, byte(position) == UInt8(ascii: "n"), byte(position + 1) == UInt8(ascii: "u"),
            byte(position + 2) == UInt8(ascii: "l"), byte(position + 3) == UInt8(ascii: "l")
        else { return false }
        position += 4
        return true
    }

    /// Skips any one value, checking only its nesting and strings.
    package mutating func skipValue() throws(Failure) {
        skipWhitespace()
        guard position < end else { throw fail("a value") }
        var depth = 0
        repeat {
            skipWhitespace()
            guard position < end else { throw fail("the end of a value") }
            switch byte(position) {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw fail("a value") }
                depth -= 1
                position += 1
            case UInt8(ascii: "\""):
                // The closing quote is the first one that no backslash escapes.
                position += 1
                while true {
                    position = quoteOrBackslash(from: position)
                    guard position < end else {
                        position = end
                        throw fail("the end of a string")
                    }
                    if byte(position) == UInt8(ascii: "\"") { break }
                    position += 2  // the backslash and what it escapes
                }
                position += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard depth > 0 else { throw fail("a value") }
                position += 1
            default:
                let start = position
                while position < end, !",:]}\" \t\r\n{[".utf8.contains(byte(position)) { position += 1 }
                guard position > start else { throw fail("a value") }
            }
        } while depth > 0
    }
}
