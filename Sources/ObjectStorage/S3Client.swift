import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// A small client for the S3 calls a publish needs (PUT, GET, HEAD, DELETE,
/// DeleteObjects) on one bucket of any S3-compatible store, over
/// async-http-client. Every request is signed anew for each attempt (SigV4,
/// header form, with the payload's SHA-256), and retried with backoff on
/// 5xx, 429, a conflicting concurrent write, and a lost connection.
///
/// Callers bound how many requests they have in flight; the connection pool
/// holds at most `maximumConnections`.
package final class S3Client: Sendable {
    package let bucket: String
    package let configuration: S3Configuration
    package let retryPolicy: RetryPolicy
    let http: HTTPClient
    let signer: SigV4Signer

    package init(
        configuration: S3Configuration, bucket: String, maximumConnections: Int = 32,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        (self.configuration, self.bucket, self.retryPolicy) = (configuration, bucket, retryPolicy)
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        var settings = HTTPClient.Configuration()
        settings.connectionPool = .init(
            idleTimeout: .seconds(30),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maximumConnections))
        settings.timeout = .init(connect: .seconds(10), read: .seconds(60))
        // A redirect would carry the request elsewhere; S3 redirects only to say the bucket is in another region.
        settings.redirectConfiguration = .disallow
        settings.decompression = .disabled
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
    }

    /// Closes the connections. Call once, when done.
    package func shutdown() async {
        try? await http.shutdown()
    }

    /// `s3://bucket/key`, for messages.
    package func describe(_ key: String) -> String { "s3://\(bucket)/\(key)" }

    // MARK: - Objects

    /// A condition on a PUT.
    package enum WriteCondition: Sendable, Equatable {
        case none
        /// `If-None-Match: *`: only when no object has the key.
        case absent
        /// `If-Match: <etag>`: only when the object is still this one.
        case matching(etag: String)
    }

    package enum PutOutcome: Sendable, Equatable {
        case stored(etag: String?)
        /// 412: the condition did not hold.
        case conditionFailed
        /// 501: the store does not do conditional writes (OpenStack Swift's s3api before 2.36, among others).
        case conditionNotImplemented
    }

    /// Stores `body` under `key` with its `Content-Type`, `Cache-Control` and
    /// `Content-MD5` (the store refuses a body that arrived damaged, 400 BadDigest).
    package func put(
        _ key: String, body: [UInt8], contentType: String, cacheControl: String? = nil,
        condition: WriteCondition = .none
    ) async throws(ObjectStorageError) -> PutOutcome {
        var headers = [("Content-Type", contentType), ("Content-MD5", Self.md5Base64(body))]
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        switch condition {
        case .none: break
        case .absent: headers.append(("If-None-Match", "*"))
        case .matching(let etag): headers.append(("If-Match", etag))
        }
        let answer = try await send(.PUT, key: key, headers: headers, body: body)
        switch answer.status {
        case 200, 201, 204: return .stored(etag: answer.headers.first(name: "etag"))
        case 412 where condition != .none: return .conditionFailed
        case 501 where condition != .none: return .conditionNotImplemented
        default: throw answer.failure("PUT", describe(key))
        }
    }

    /// An object's bytes and validators.
    package struct Object: Sendable, Equatable {
        package var body: [UInt8]
        package var etag: String?
        package var contentType: String?
        package var cacheControl: String?
    }

    /// The object, or nil when there is none (404). At most `limit` bytes are taken.
    package func get(_ key: String, limit: Int = 64 << 20) async throws(ObjectStorageError) -> Object? {
        let answer = try await send(.GET, key: key, responseLimit: limit)
        switch answer.status {
        case 200:
            return Object(
                body: answer.body, etag: answer.headers.first(name: "etag"),
                contentType: answer.headers.first(name: "content-type"),
                cacheControl: answer.headers.first(name: "cache-control"))
        case 404: return nil
        default: throw answer.failure("GET", describe(key))
        }
    }

    /// The object's headers (its body empty), or nil when there is none.
    package func head(_ key: String) async throws(ObjectStorageError) -> Object? {
        let answer = try await send(.HEAD, key: key)
        switch answer.status {
        case 200:
            return Object(
                body: [], etag: answer.headers.first(name: "etag"),
                contentType: answer.headers.first(name: "content-type"),
                cacheControl: answer.headers.first(name: "cache-control"))
        case 404: return nil
        default: throw answer.failure("HEAD", describe(key))
        }
    }

    /// Deletes one object; a missing one is not an error.
    package func delete(_ key: String) async throws(ObjectStorageError) {
        let answer = try await send(.DELETE, key: key)
        guard [200, 204, 404].contains(answer.status) else { throw answer.failure("DELETE", describe(key)) }
    }

    /// Deletes objects with DeleteObjects (`POST ?delete`), 1,000 keys a
    /// request (the API's limit), with `Content-MD5`, which AWS long required
    /// and several S3-compatible stores still do (AWS API reference,
    /// DeleteObjects). Missing keys count as deleted.
    package func deleteObjects(_ keys: [String]) async throws(ObjectStorageError) {
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(start + 1000, keys.count)])
            start += chunk.count
            let body = Array(Self.deleteRequestXML(chunk).utf8)
            let headers = [("Content-Type", "application/xml"), ("Content-MD5", Self.md5Base64(body))]
            let answer = try await send(.POST, key: nil, query: [("delete", "")], headers: headers, body: body)
            guard answer.status == 200 else { throw answer.failure("DeleteObjects", "s3://\(bucket)") }
            let text = String(decoding: answer.body, as: UTF8.self)
            if let error = XMLText.elements("Error", in: text).first {
                let key = XMLText.element("Key", in: error) ?? "?"
                let code = XMLText.element("Code", in: error) ?? "?"
                throw ObjectStorageError(
                    .refused,
                    "DeleteObjects \(describe(key)) failed: \(code) "
                        + (XMLText.element("Message", in: error) ?? ""), status: 200, code: code)
            }
        }
    }

    static func deleteRequestXML(_ keys: [String]) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            + "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
            + keys.map { "<Object><Key>\(XMLText.escaped($0))</Key></Object>" }.joined() + "</Delete>"
    }

    /// Base64 of the 128-bit MD5 (not hex), as `Content-MD5` takes it (RFC 1864).
    static func md5Base64(_ body: [UInt8]) -> String {
        Data(Insecure.MD5.hash(data: body)).base64EncodedString()
    }
}
