/// Text that is nearly always a lowercase hex digest: a SHA-256 (64 digits),
/// or an ETag (32 digits in double quotes). Such text is kept as the digest's
/// bytes, inside the value; any other text as it is. A build state holds four
/// per pass: as strings, each is a heap object of over 100 bytes, 40 MB at
/// 100,000 passes, allocated one by one on every build's load.
///
/// The form follows from the text alone, so equal texts are equal values.
package struct PackedDigest: Sendable, Equatable {
    private enum Form: Sendable, Equatable {
        case sha256(UInt64, UInt64, UInt64, UInt64)
        case quoted128(UInt64, UInt64)
        case text(String)
    }

    private var form: Form

    package init(_ text: String) {
        var text = text
        form = text.withUTF8 { Self.packedForm(of: $0) } ?? .text(text)
    }

    package init(utf8: UnsafeBufferPointer<UInt8>) {
        form = Self.packedForm(of: utf8) ?? .text(String(decoding: utf8, as: UTF8.self))
    }

    /// The text `"` + `digits` + `"`, when `digits` are 32 lowercase hex digits (an ETag, read
    /// without unescaping its quotes first); else nil.
    package init?(quoting digits: UnsafeBufferPointer<UInt8>) {
        guard digits.count == 32, let a = Self.word(digits, at: 0), let b = Self.word(digits, at: 16) else {
            return nil
        }
        form = .quoted128(a, b)
    }

    /// Whether the value is kept as digest bytes (for tests).
    package var isPacked: Bool {
        if case .text = form { return false }
        return true
    }

    package var text: String {
        switch form {
        case .text(let text): return text
        default:
            let count = self.count
            return String(unsafeUninitializedCapacity: count) { buffer in
                writeUTF8(to: UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
                return count
            }
        }
    }

    /// Calls `body` with the text's UTF-8 bytes, made on the stack when the text is packed.
    package func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if case .text(var text) = form { return try text.withUTF8(body) }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let written = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
            writeUTF8(to: written)
            return try body(UnsafeBufferPointer(written))
        }
    }

    /// The length of a packed form's text.
    private var count: Int {
        switch form {
        case .sha256: 64
        case .quoted128: 34
        case .text(let text): text.utf8.count
        }
    }

    private func writeUTF8(to buffer: UnsafeMutableBufferPointer<UInt8>) {
        func write(_ word: UInt64, at offset: Int) {
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[offset + index] =
                    digits.utf8Start[Int(truncatingIfNeeded: (word >> UInt64(60 - 4 * index)) & 0xF)]
            }
        }
        switch form {
        case .sha256(let a, let b, let c, let d):
            write(a, at: 0)
            write(b, at: 16)
            write(c, at: 32)
            write(d, at: 48)
        case .quoted128(let a, let b):
            buffer[0] = UInt8(ascii: "\"")
            write(a, at: 1)
            write(b, at: 17)
            buffer[33] = UInt8(ascii: "\"")
        case .text: break
        }
    }

    private static func packedForm(of utf8: UnsafeBufferPointer<UInt8>) -> Form? {
        if utf8.count == 64 {
            guard let a = word(utf8, at: 0), let b = word(utf8, at: 16), let c = word(utf8, at: 32),
                let d = word(utf8, at: 48)
            else { return nil }
            return .sha256(a, b, c, d)
        }
        if utf8.count == 34, utf8[0] == UInt8(ascii: "\""), utf8[33] == UInt8(ascii: "\"") {
            guard let a = word(utf8, at: 1), let b = word(utf8, at: 17) else { return nil }
            return .quoted128(a, b)
        }
        return nil
    }

    /// Sixteen lowercase hex digits as a number; nil for anything else (upper case too, which would not come back
    /// the same). Without a branch per digit: 100,000 records have a million such words.
    private static func word(_ utf8: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64? {
        precondition(offset >= 0 && offset + 16 <= utf8.count)
        let digits = utf8.baseAddress! + offset
        var value: UInt64 = 0
        var invalid: UInt8 = 0
        for index in 0..<16 {
            let character = digits[index]
            let decimal = character &- UInt8(ascii: "0")
            let letter = character &- UInt8(ascii: "a")
            let isDecimal = decimal < 10
            invalid |= (isDecimal ? 0 : 1) & (letter < 6 ? 0 : 1)
            value = value << 4 | UInt64(isDecimal ? decimal : letter &+ 10)
        }
        return invalid == 0 ? value : nil
    }
}
