import Crypto
package import Foundation

/// AWS Signature Version 4, header form, for one request (the rules of
/// "Authenticating Requests: Using the Authorization Header", Amazon S3 API
/// Reference, sig-v4-header-based-auth). S3 differs from the other services
/// in two ways that matter here: the path is URI-encoded once and never
/// normalized (`a//b` and `.` are signed as they are), and every request
/// carries `x-amz-content-sha256`, which `S3Client` adds before signing.
package struct SigV4Signer: Sendable {
    package var credentials: S3Credentials
    package var region: String
    package var service: String

    package init(credentials: S3Credentials, region: String, service: String = "s3") {
        (self.credentials, self.region, self.service) = (credentials, region, service)
    }

    /// A request as it will be sent: `encodedPath` is exactly the bytes on
    /// the wire (see `S3URIEncoding`), `query` the raw names and values,
    /// `headers` every header to sign (`host` among them).
    package struct Request: Sendable {
        package var method: String
        package var encodedPath: String
        package var query: [(name: String, value: String)]
        package var headers: [(name: String, value: String)]
        package var payloadHash: String

        package init(
            method: String, encodedPath: String, query: [(name: String, value: String)] = [],
            headers: [(name: String, value: String)], payloadHash: String
        ) {
            (self.method, self.encodedPath, self.query, self.headers, self.payloadHash) = (
                method, encodedPath, query, headers, payloadHash
            )
        }
    }

    /// SHA-256 of an empty body, hex.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Adds `x-amz-date` (and `x-amz-security-token` for temporary
    /// credentials), then `Authorization`. Signed at `date`, which must be
    /// the time of this attempt: a signature is valid for 15 minutes.
    package func sign(_ request: inout Request, at date: Date) {
        let stamp = AmzDate(date)
        request.headers.append((name: "x-amz-date", value: stamp.dateTime))
        if let token = credentials.sessionToken { request.headers.append((name: "x-amz-security-token", value: token)) }
        request.headers.append((name: "Authorization", value: authorization(for: request, stamp: stamp)))
    }

    /// The `Authorization` value for a request that already has its `x-amz-date` (and token) header.
    package func authorization(for request: Request, stamp: AmzDate) -> String {
        let canonical = canonicalRequest(request)
        let scope = "\(stamp.date)/\(region)/\(service)/aws4_request"
        let signature = hex(
            HMAC<SHA256>.authenticationCode(
                for: Array(stringToSign(canonical.text, stamp: stamp).utf8),
                using: signingKey(date: stamp.date)))
        return "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
    }

    /// Method, path, sorted query, sorted lower-case headers (values trimmed,
    /// inner runs of spaces made one, repeated names joined with commas),
    /// the signed header names, the payload hash: one per line.
    package func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        let encoded: [(name: String, value: String)] = request.query.map { pair in
            (
                S3URIEncoding.encode(pair.name, keepingSlashes: false),
                S3URIEncoding.encode(pair.value, keepingSlashes: false)
            )
        }
        let sorted = encoded.sorted { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        let query = sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        var headers: [String: [String]] = [:]
        for (name, value) in request.headers where name.lowercased() != "authorization" {
            headers[name.lowercased(), default: []].append(Self.canonicalValue(value))
        }
        let names = headers.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(headers[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [request.method, request.encodedPath, query, canonicalHeaders, signedHeaders, request.payloadHash]
            .joined(separator: "\n")
        return (text, signedHeaders)
    }

    package func stringToSign(_ canonicalRequest: String, stamp: AmzDate) -> String {
        let digest = hex(SHA256.hash(data: Array(canonicalRequest.utf8)))
        return "AWS4-HMAC-SHA256\n\(stamp.dateTime)\n\(stamp.date)/\(region)/\(service)/aws4_request\n\(digest)"
    }

    private func signingKey(date: String) -> SymmetricKey {
        let secret = credentials.withSecret { Array("AWS4\($0)".utf8) }
        var key = SymmetricKey(data: secret)
        for part in [date, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// Leading and trailing spaces removed, inner runs of spaces made one (suite case get-header-value-trim).
    static func canonicalValue(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}

/// The two spellings of a signing time, in UTC: `20150830T123600Z` and `20150830`.
package struct AmzDate: Sendable, Equatable {
    package var dateTime: String
    package var date: String { String(dateTime.prefix(8)) }

    package init(_ date: Date) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        dateTime =
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}

/// S3's URI encoding: every byte but `A-Z a-z 0-9 - . _ ~` as `%XX` (upper-case
/// hex), a space as `%20` (never `+`), and `/` kept only in an object key.
/// The encoded key is what goes on the wire and into the canonical request
/// alike: encoded once, so a `+` in a key is `%2B` (a literal `+` in a path
/// reads as a space to S3) and a `%` is `%25`.
package enum S3URIEncoding {
    package static func encode(_ text: String, keepingSlashes: Bool) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                result.append("/")
            default:
                result.append("%")
                result.append(digits[Int(byte >> 4)])
                result.append(digits[Int(byte & 0x0F)])
            }
        }
        return result
    }
}

/// Lower-case hex of bytes.
func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var result: [UInt8] = []
    for byte in bytes {
        result.append(digits[Int(byte >> 4)])
        result.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: result, as: UTF8.self)
}

func hex<D: Digest>(_ digest: D) -> String { hex(Array(digest)) }
func hex(_ code: HashedAuthenticationCode<SHA256>) -> String { hex(Array(code)) }
