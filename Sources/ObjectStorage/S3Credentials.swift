import AtomicFiles

/// An access key, its secret and an optional session token. The secret and
/// the token are never printed: `description` shows the key ID only, and the
/// secret is reached only through `withSecret` (by the signer).
package struct S3Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    package var accessKeyID: String
    private var secretAccessKey: String
    package var sessionToken: String?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        (self.accessKeyID, self.secretAccessKey, self.sessionToken) = (accessKeyID, secretAccessKey, sessionToken)
    }

    package func withSecret<T>(_ body: (String) -> T) -> T { body(secretAccessKey) }

    package var description: String { "access key \(accessKeyID)\(sessionToken == nil ? "" : " with a session token")" }
    package var debugDescription: String { description }
}

/// Where and as whom the client talks to a store, the way the AWS command-line
/// tools take it (AWS CLI user guide, "Environment variables" and "Configuration
/// and credential file settings"; SDK reference, "Service-specific endpoints"):
///
/// - `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`; when the
///   first two are not both set, the profile `AWS_PROFILE` (default `default`) of
///   `AWS_SHARED_CREDENTIALS_FILE` (default `~/.aws/credentials`);
/// - `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`;
/// - `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`: a custom store, addressed
///   path-style (`ENDPOINT/BUCKET/KEY`); without one, AWS itself,
///   `https://BUCKET.s3.REGION.amazonaws.com/KEY` (path-style for a bucket
///   with a dot, which a wildcard certificate does not cover).
package struct S3Configuration: Sendable, Equatable {
    package var credentials: S3Credentials
    package var region: String
    package var endpoint: S3Endpoint?

    package init(credentials: S3Credentials, region: String = "us-east-1", endpoint: S3Endpoint? = nil) {
        (self.credentials, self.region, self.endpoint) = (credentials, region, endpoint)
    }

    package init(environment: [String: String]) throws(ObjectStorageError) {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.trimmingWhitespace().isEmpty ? nil : $0.trimmingWhitespace() }
        }
        if let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
            credentials = S3Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        } else {
            credentials = try Self.profileCredentials(environment: environment, value: value)
        }
        region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
        guard region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw ObjectStorageError(
                .configuration,
                "AWS_REGION \(region.debugDescription) is not a region name (like us-east-1 or auto)")
        }
        if let text = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") {
            endpoint = try S3Endpoint(parsing: text)
        }
    }

    private static func profileCredentials(
        environment: [String: String],
        value: (String) -> String?
    ) throws(ObjectStorageError) -> S3Credentials {
        let profile = value("AWS_PROFILE") ?? "default"
        let path = value("AWS_SHARED_CREDENTIALS_FILE") ?? value("HOME").map { "\($0)/.aws/credentials" }
        let missing =
            "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
            + "temporary ones), or AWS_PROFILE with a profile in ~/.aws/credentials"
        guard let path else { throw ObjectStorageError(.configuration, missing) }
        guard let bytes = AtomicFileSystem.readFile(path) else {
            if value("AWS_PROFILE") != nil || value("AWS_SHARED_CREDENTIALS_FILE") != nil {
                throw ObjectStorageError(
                    .configuration, "cannot read \(path), where AWS_PROFILE \(profile) should be; \(missing)")
            }
            throw ObjectStorageError(.configuration, missing)
        }
        let sections = CredentialsFile.sections(String(decoding: bytes, as: UTF8.self))
        guard let section = sections[profile] else {
            throw ObjectStorageError(.configuration, "\(path) has no [\(profile)] profile; \(missing)")
        }
        guard let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else {
            throw ObjectStorageError(
                .configuration, "[\(profile)] in \(path) lacks aws_access_key_id or aws_secret_access_key")
        }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: section["aws_session_token"])
    }
}

/// The INI of `~/.aws/credentials`: `[name]` sections of `key = value` lines;
/// `#` and `;` start comments; keys are case-insensitive (AWS SDK reference,
/// "Shared config and credentials files", format).
package enum CredentialsFile {
    package static func sections(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(
            omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            let line = String(rawLine).trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]).trimmingWhitespace().lowercased()
            let value = String(line[line.index(after: equals)...]).trimmingWhitespace()
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}

/// A custom store's base URL: `http(s)://host[:port][/path]`.
package struct S3Endpoint: Sendable, Equatable, CustomStringConvertible {
    package var isSecure: Bool
    package var host: String
    package var port: Int?
    /// A path the store sits under, without a trailing slash ("" for none).
    package var basePath: String

    package init(parsing text: String) throws(ObjectStorageError) {
        let refusal = ObjectStorageError(
            .configuration,
            "AWS_ENDPOINT_URL \(text.debugDescription) is not an endpoint URL "
                + "(http://HOST[:PORT] or https://HOST[:PORT], like http://127.0.0.1:8333)")
        let schemeEnd: String.Index
        if text.hasPrefix("https://") {
            isSecure = true
            schemeEnd = text.index(text.startIndex, offsetBy: 8)
        } else if text.hasPrefix("http://") {
            isSecure = false
            schemeEnd = text.index(text.startIndex, offsetBy: 7)
        } else {
            throw refusal
        }
        let rest = text[schemeEnd...]
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
        guard !authority.contains("@"), !authority.contains("?"), !authority.contains("#"), !authority.isEmpty,
            !path.contains("?"), !path.contains("#")
        else { throw refusal }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                throw refusal
            }
            (host, port) = (String(authority[..<colon]), number)
        } else {
            (host, port) = (String(authority), nil)
        }
        guard !host.isEmpty else { throw refusal }
    }

    /// The `Host` header: the host, with the port when one was given.
    package var hostHeader: String { port.map { "\(host):\($0)" } ?? host }

    package var description: String { "\(isSecure ? "https" : "http")://\(hostHeader)\(basePath)" }
}

extension String {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
