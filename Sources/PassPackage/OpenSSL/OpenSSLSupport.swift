// Small helpers shared by the OpenSSL wrappers in this folder.
//
// Every call into OpenSSL in PassPackage lives in this folder. Code outside it
// only sees Swift values (`[UInt8]`, `String`, `Date`, the wrapper classes).

import COpenSSL
import Foundation

enum OpenSSL {
    /// Loads OpenSSL's "default" and "legacy" providers, once per process.
    ///
    /// Why both: `.p12` files exported by older Keychain Access or by
    /// `openssl pkcs12 -export -legacy` encrypt with RC2-40 / 3DES, which
    /// OpenSSL 3 only implements in the "legacy" provider (see
    /// https://www.openssl.org/docs/man3.0/man7/OSSL_PROVIDER-legacy.html).
    /// Loading any provider explicitly stops OpenSSL from loading "default"
    /// implicitly, so "default" is loaded as well
    /// (https://www.openssl.org/docs/man3.0/man7/crypto.html, "Implicit
    /// loading"). A failure to load "legacy" (for example a distribution that
    /// does not ship it) is ignored: only legacy `.p12` files then fail, with
    /// an error that says so.
    ///
    /// A `static let` is initialized exactly once, thread-safely.
    private static let providersLoaded: Bool = {
        // Providers stay loaded for the life of the process; the handles are
        // deliberately never unloaded.
        let defaultProvider = OSSL_PROVIDER_load(nil, "default")
        _ = OSSL_PROVIDER_load(nil, "legacy")
        ERR_clear_error()
        return defaultProvider != nil
    }()

    static func loadProviders() {
        _ = providersLoaded
    }

    /// Empties this thread's OpenSSL error queue and returns its messages,
    /// oldest first, joined by "; " (empty when there were none).
    ///
    /// OpenSSL keeps errors in a per-thread queue; leaving stale entries there
    /// would make a later, unrelated failure report the wrong reason.
    static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { pointer in
                ERR_error_string_n(code, pointer.baseAddress, pointer.count)
            }
            let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            messages.append(message)
        }
        return messages.joined(separator: "; ")
    }

    static func clearErrors() {
        ERR_clear_error()
    }

    /// Runs `body` with a read-only memory BIO over `bytes`; the BIO does not
    /// copy, so it is only valid inside `body`. Returns nil if OpenSSL cannot
    /// allocate the BIO.
    static func withReadOnlyBIO<Result, Failure: Error>(
        _ bytes: [UInt8],
        _ body: (OpaquePointer) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let outcome: Swift.Result<Result, Failure>? = bytes.withUnsafeBytes { buffer in
            // BIO_new_mem_buf refuses a NULL buffer, which is what an empty
            // array has; an empty memory BIO reads as end-of-file all the same.
            guard
                buffer.count <= Int(Int32.max),
                let bio = buffer.isEmpty
                    ? BIO_new(BIO_s_mem())
                    : BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))
            else { return nil }
            defer { BIO_free(bio) }
            do throws(Failure) {
                return .success(try body(bio))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .none: return nil
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Runs `body` with a new, growable memory BIO and returns what `body`
    /// wrote into it, or nil when `body` returns false or allocation fails.
    static func collectingBIO(_ body: (OpaquePointer) -> Bool) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard body(bio) else { return nil }
        return contents(of: bio)
    }

    /// The bytes a memory BIO holds (`BIO_get_mem_data` is a macro over
    /// `BIO_ctrl(…, BIO_CTRL_INFO, …)`, which Swift cannot import).
    static func contents(of bio: OpaquePointer) -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// An ASN.1 UTCTime / GeneralizedTime as a `Date`.
    static func date(from time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else {
            clearErrors()
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }

    /// A new ASN1_TIME for `date` (UTCTime up to 2049, GeneralizedTime after,
    /// as RFC 5280 §4.1.2.5 and RFC 5652 §11.3 require). Caller frees.
    static func makeTime(_ date: Date) -> UnsafeMutablePointer<ASN1_TIME>? {
        guard let seconds = seconds(date) else { return nil }
        return ASN1_TIME_set(nil, seconds)
    }

    /// `date` in whole seconds since 1970 (rounded down), or nil when it is
    /// not finite or does not fit a `time_t`.
    static func seconds(_ date: Date) -> time_t? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds >= Double(time_t.min), seconds < Double(time_t.max) else { return nil }
        return time_t(seconds)
    }

    /// An ASN.1 string's contents as UTF-8.
    static func string(from asn1: UnsafePointer<ASN1_STRING>?) -> String? {
        guard let asn1 else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, asn1)
        guard length >= 0, let utf8 else {
            clearErrors()
            return nil
        }
        defer { CRYPTO_free(utf8, nil, 0) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// `password` as a NUL-terminated C string, for OpenSSL's password
    /// arguments. OpenSSL copies what it needs; the buffer is zeroed after use
    /// (the Swift `String` itself cannot be wiped).
    static func withPassword<Result>(
        _ password: String?,
        _ body: (UnsafeMutablePointer<CChar>?) -> Result
    ) -> Result {
        guard let password else { return body(nil) }
        var buffer = Array(password.utf8CString)
        defer {
            buffer.withUnsafeMutableBufferPointer { pointer in
                OPENSSL_cleanse(pointer.baseAddress, pointer.count)
            }
        }
        return buffer.withUnsafeMutableBufferPointer { body($0.baseAddress) }
    }
}

/// A PEM password callback that supplies no password.
///
/// Passing a NULL callback makes OpenSSL fall back to `PEM_def_callback`,
/// which prompts on the controlling terminal when no password was given
/// (https://www.openssl.org/docs/man3.0/man3/pem_password_cb.html). A build
/// must never block on a prompt, so when there is no password this callback
/// is used instead: it returns -1, which fails the decryption.
func noPasswordCallback(
    _ buffer: UnsafeMutablePointer<CChar>?,
    _ size: Int32,
    _ forWriting: Int32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    -1
}

extension Array where Element == UInt8 {
    /// Whether these bytes hold PEM ("-----BEGIN …" somewhere near the start,
    /// possibly after text such as `openssl pkcs12` "Bag Attributes").
    var looksLikePEM: Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard count >= marker.count else { return false }
        // DER starts with a SEQUENCE tag (0x30); PEM is ASCII text.
        if first == 0x30 { return false }
        return firstRange(of: marker) != nil
    }

    func contains(ascii text: String) -> Bool {
        firstRange(of: Array(text.utf8)) != nil
    }
}
