import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// When and how long to wait before trying a request again: up to `attempts`
/// in all, after a random wait of up to `base × 2^(n-1)`, at most `cap`
/// ("full jitter", as the AWS SDKs' standard retry mode does).
package struct RetryPolicy: Sendable {
    package var attempts: Int
    package var base: Double
    package var cap: Double

    package init(attempts: Int = 5, base: Double = 0.1, cap: Double = 5) {
        (self.attempts, self.base, self.cap) = (max(1, attempts), base, cap)
    }

    func delay(afterAttempt attempt: Int) -> Double {
        Double.random(in: 0...min(cap, base * Double(1 << min(attempt - 1, 20))))
    }

    /// 5xx, 429 (and S3's 503 SlowDown), 408, and the codes S3 sends for a
    /// request to try again: a timed-out body, a conflicting conditional write,
    /// a clock that moved (the next attempt is signed anew).
    static func isRetryable(status: Int, code: String?) -> Bool {
        if status >= 500 && status != 501 { return true }
        if status == 429 || status == 408 { return true }
        return [
            "RequestTimeout", "ConditionalRequestConflict", "RequestTimeTooSkewed", "SlowDown",
            "OperationAborted",
        ].contains(code ?? "")
    }
}

/// A store's answer.
struct StoreAnswer: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]) {
        (self.status, self.headers, self.body) = (status, headers, body)
    }

    var errorCode: String? { XMLText.element("Code", in: String(decoding: body.prefix(4096), as: UTF8.self)) }

    func failure(_ operation: String, _ object: String) -> ObjectStorageError {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        let code = XMLText.element("Code", in: text)
        let message = XMLText.element("Message", in: text).map { ": \($0.prefix(300))" } ?? ""
        return ObjectStorageError(
            .refused,
            "\(operation) \(object): the store answered \(status) \(code ?? "")\(message); "
                + ObjectStorageError.advice(code: code, status: status), status: status, code: code)
    }
}

extension S3Client {
    /// The path on the wire (and in the canonical request), the Host header and the URL of a request.
    func target(key: String?, query: [(String, String)]) -> (path: String, host: String, url: String) {
        let encodedKey = key.map { S3URIEncoding.encode($0, keepingSlashes: true) }
        let scheme: String
        let host: String
        let path: String
        if let endpoint = configuration.endpoint {
            (scheme, host) = (endpoint.isSecure ? "https" : "http", endpoint.hostHeader)
            path = "\(endpoint.basePath)/\(bucket)" + (encodedKey.map { "/\($0)" } ?? "")
        } else if bucket.contains(".") {
            (scheme, host) = ("https", "s3.\(configuration.region).amazonaws.com")
            path = "/\(bucket)" + (encodedKey.map { "/\($0)" } ?? "")
        } else {
            (scheme, host) = ("https", "\(bucket).s3.\(configuration.region).amazonaws.com")
            path = "/" + (encodedKey ?? "")
        }
        let queryText = query.map { name, value in
            let encodedName = S3URIEncoding.encode(name, keepingSlashes: false)
            return value.isEmpty ? encodedName : "\(encodedName)=\(S3URIEncoding.encode(value, keepingSlashes: false))"
        }.joined(separator: "&")
        return (path, host, "\(scheme)://\(host)\(path)\(queryText.isEmpty ? "" : "?\(queryText)")")
    }

    /// Sends a request, signed anew for each attempt, and retries what
    /// `RetryPolicy` calls retryable, and a connection that failed. The last
    /// answer is returned whatever its status; a connection that failed on
    /// every attempt is an error.
    func send(
        _ method: HTTPMethod, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: [UInt8] = [], responseLimit: Int = 1 << 20
    ) async throws(ObjectStorageError) -> StoreAnswer {
        let payloadHash = body.isEmpty ? SigV4Signer.emptyPayloadHash : hex(SHA256.hash(data: body))
        let object = key.map(describe) ?? "s3://\(bucket)"
        var attempt = 0
        while true {
            attempt += 1
            do {
                let answer = try await sendOnce(
                    method, key: key, query: query, headers: headers, body: body,
                    payloadHash: payloadHash, responseLimit: responseLimit)
                guard attempt < retryPolicy.attempts,
                    RetryPolicy.isRetryable(status: answer.status, code: answer.errorCode)
                else { return answer }
            } catch is CancellationError {
                throw ObjectStorageError(.cancelled, "\(method.rawValue) \(object) was cancelled")
            } catch {
                guard attempt < retryPolicy.attempts, !Task.isCancelled else {
                    let target =
                        configuration.endpoint?.description ?? "https://s3.\(configuration.region).amazonaws.com"
                    throw ObjectStorageError(
                        .unreachable,
                        "\(method.rawValue) \(object): cannot reach the store at \(target) "
                            + "after \(attempt) attempt\(attempt == 1 ? "" : "s") (\(Self.describe(error))); "
                            + "check AWS_ENDPOINT_URL and the network")
                }
            }
            do {
                try await Task.sleep(nanoseconds: UInt64(retryPolicy.delay(afterAttempt: attempt) * 1e9))
            } catch {
                throw ObjectStorageError(.cancelled, "\(method.rawValue) \(object) was cancelled")
            }
        }
    }

    private func sendOnce(
        _ method: HTTPMethod, key: String?, query: [(String, String)], headers: [(String, String)],
        body: [UInt8], payloadHash: String, responseLimit: Int
    ) async throws -> StoreAnswer {
        let target = target(key: key, query: query)
        var signable = SigV4Signer.Request(
            method: method.rawValue, encodedPath: target.path, query: query.map { (name: $0.0, value: $0.1) },
            headers: [(name: "Host", value: target.host), (name: "x-amz-content-sha256", value: payloadHash)]
                + headers.map { (name: $0.0, value: $0.1) },
            payloadHash: payloadHash)
        signer.sign(&signable, at: Date())
        var request = HTTPClientRequest(url: target.url)
        request.method = method
        for (name, value) in signable.headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty || method == .PUT || method == .POST {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await http.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: max(responseLimit, 64 << 10))
        return StoreAnswer(
            status: Int(response.status.code), headers: response.headers,
            body: Array(bytes.readableBytesView))
    }

    /// An error of the connection, in words; never the request (its headers hold the signature).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        if let error = error as? NIOCore.IOError { return error.description }
        if error is NIOCore.NIOTooManyBytesError { return "the answer was larger than expected" }
        return String(describing: type(of: error)) + ": \(error)".prefix(200)
    }
}

/// The few XML elements S3's answers need, found by name (its error and
/// DeleteObjects documents are flat and small).
enum XMLText {
    static func element(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"),
            let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return unescaped(String(text[open.upperBound..<close.lowerBound]))
    }

    static func elements(_ name: String, in text: String) -> [String] {
        var result: [String] = []
        var rest = text[...]
        while let open = rest.firstRange(of: "<\(name)>"),
            let close = rest[open.upperBound...].firstRange(of: "</\(name)>")
        {
            result.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return result
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
