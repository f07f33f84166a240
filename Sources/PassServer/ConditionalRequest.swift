/// Conditional GET (RFC 9110 §13), which Apple's protocol asks for on pass
/// downloads: "Support standard HTTP caching on this endpoint: check for the
/// If-Modified-Since header or entity tags, and return HTTP status code 304
/// if the pass has not changed."
package enum ConditionalRequest {
    /// Whether a GET or HEAD of a representation with `etag` (strong, quoted)
    /// and `lastModified` (seconds) is answered 304 Not Modified.
    ///
    /// RFC 9110 §13.2.2: If-None-Match decides when present (weak comparison,
    /// `*` matches any current representation); If-Modified-Since counts
    /// only without it, and only when it is a valid HTTP-date.
    package static func isNotModified(
        ifNoneMatch: [String], ifModifiedSince: String?, etag: String, lastModified: Int64?
    ) -> Bool {
        if !ifNoneMatch.isEmpty {
            return matches(ifNoneMatch: ifNoneMatch, etag: etag)
        }
        if let ifModifiedSince, let lastModified, let since = HTTPDate.parse(ifModifiedSince) {
            return lastModified <= since
        }
        return false
    }

    /// Weak comparison (RFC 9110 §8.8.3.2): opaque tags equal, `W/` ignored on either side.
    static func matches(ifNoneMatch fields: [String], etag: String) -> Bool {
        let target = opaqueTag(etag)
        for field in fields {
            guard let tags = entityTags(in: field) else { continue }
            for tag in tags where tag == "*" || opaqueTag(tag) == target { return true }
        }
        return false
    }

    /// `"a", W/"b" , "c,d"` → [`"a"`, `W/"b"`, `"c,d"`]; `*` → [`*`]; nil when malformed.
    static func entityTags(in field: String) -> [String]? {
        let bytes = Array(field.utf8)
        var tags: [String] = []
        var index = 0
        func skipSeparators() {
            while index < bytes.count,
                bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t")
                    || bytes[index] == UInt8(ascii: ",")
            {
                index += 1
            }
        }
        skipSeparators()
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            skipSeparators()
            return index == bytes.count ? ["*"] : nil
        }
        while index < bytes.count {
            let start = index
            if bytes[index] == UInt8(ascii: "W"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                index += 2
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") { index += 1 }
            guard index < bytes.count else { return nil }
            index += 1
            tags.append(String(decoding: bytes[start..<index], as: UTF8.self))
            skipSeparators()
        }
        return tags
    }

    private static func opaqueTag(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}
