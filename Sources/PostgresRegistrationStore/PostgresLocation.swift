import AtomicFiles
import Foundation
import RegistrationStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL server and database, parsed from a libpq-style URL
/// (PASSFORGE_DATABASE_URL):
///
///     postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE
///     postgresql://USER@/DATABASE?host=/run/postgresql      (a unix socket folder, as libpq)
///     postgres://USER@H1:5432,H2:5433/DATABASE?target_session_attrs=read-write
///
/// Several hosts (comma-separated, each with its own port, or `host=` and
/// `port=` lists) are tried as libpq tries them: in order, the first whose
/// session matches `target_session_attrs` is used (`endpoint`); the store
/// looks for another when that one goes away or stops accepting writes.
///
/// User, password, host and database are percent-decoded. Defaults follow
/// libpq: port 5432, user the system user, database the user's name,
/// `sslmode=prefer`, and with no host the unix socket in
/// `/var/run/postgresql` (or `/tmp` when that folder does not exist).
///
/// `description` never shows the password.
package struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    package enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// libpq's `host=/folder`: the socket file is `/folder/.s.PGSQL.PORT`.
        case unixSocket(directory: String, port: Int)
    }

    /// libpq's `sslmode`, as far as postgres-nio can follow it:
    /// - `disable`: no TLS.
    /// - `allow`, `prefer` (the default): TLS when the server offers it,
    ///   plain otherwise; the certificate is not checked (as libpq).
    /// - `require`: TLS or no connection; the certificate is not checked
    ///   (as libpq without a root certificate file).
    /// - `verify-ca`: TLS, the certificate must chain to a trusted root
    ///   (`sslrootcert`, else the system's roots); any host name.
    /// - `verify-full`: as `verify-ca`, and the certificate must name the host.
    /// Unix sockets never use TLS (as libpq).
    package enum SSLMode: String, Sendable, Equatable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// libpq's `target_session_attrs`: which of several servers to use.
    /// - `any` (libpq's default): the first that accepts a connection.
    /// - `read-write`: one whose sessions may write (`transaction_read_only` off).
    /// - `read-only`: one whose sessions may not write.
    /// - `primary` / `standby`: one not in recovery / in recovery (`pg_is_in_recovery()`).
    /// - `prefer-standby`: a standby when one is up, else any.
    package enum TargetSession: String, Sendable, Equatable, CaseIterable {
        case any
        case readWrite = "read-write"
        case readOnly = "read-only"
        case primary, standby
        case preferStandby = "prefer-standby"
    }

    /// The server connections go to: one of `endpoints` (the first, until a failover picks another).
    package var endpoint: Endpoint
    /// Every server the URL names, in its order (at least one).
    package var endpoints: [Endpoint]
    package var targetSession: TargetSession = .any
    package var user: String
    package var password: String?
    package var database: String
    package var sslMode: SSLMode
    /// A PEM file of the root certificates to trust (`sslrootcert`); nil: the system's.
    package var sslRootCertificate: String?
    /// `connect_timeout`, in seconds; nil: the store's default.
    package var connectTimeout: Int?
    package var applicationName: String?

    package static let defaultPort = 5432

    package init(
        endpoint: Endpoint, user: String, password: String?, database: String,
        sslMode: SSLMode = .prefer, sslRootCertificate: String? = nil
    ) {
        self.endpoint = endpoint
        self.endpoints = [endpoint]
        self.user = user
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.sslRootCertificate = sslRootCertificate
    }

    /// Parses a `postgres://` or `postgresql://` URL.
    package init(url: String) throws(PostgresStoreError) {
        let text = url.trimmingWhitespace()
        func invalid(_ reason: String) -> PostgresStoreError {
            PostgresStoreError(
                kind: .invalidURL,
                description: "\(StoreLocation.environmentVariable) is not a valid PostgreSQL URL "
                    + "(\(StoreLocation.redacted(text))): \(reason)")
        }
        guard let schemeEnd = text.range(of: "://"),
            ["postgres", "postgresql"].contains(text[..<schemeEnd.lowerBound].lowercased())
        else {
            throw invalid("it must start with postgres:// or postgresql://")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var queryText: Substring = ""
        if let question = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        // The user and password end at the last @ (a password may hold / : or @
        // unencoded); a database name with an @ must encode it as %40.
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], what: "the user name", invalid)
                password = try Self.decode(userInfo[userInfo.index(after: colon)...], what: "the password", invalid)
            } else {
                user = try Self.decode(userInfo, what: "the user name", invalid)
            }
        }
        var hostPort = rest
        var parts = Parts(user: user, password: password)
        if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            let pathText = rest[rest.index(after: slash)...]
            if !pathText.isEmpty { parts.database = try Self.decode(pathText, what: "the database name", invalid) }
        }
        for item in hostPort.split(separator: ",", omittingEmptySubsequences: false) where !hostPort.isEmpty {
            let (host, port) = try Self.hostAndPort(item, invalid)
            parts.hosts.append(host)
            parts.ports.append(port ?? "")
        }

        // Settled below; the query's parameters may set them first.
        (endpoint, endpoints, self.user, self.database) = (.tcp(host: "", port: 0), [], "", "")
        sslMode = .prefer
        for pair in queryText.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(pieces[0], what: "a parameter name", invalid)
            var value = ""
            if pieces.count > 1 { value = try Self.decode(pieces[1], what: "the value of \(key)", invalid) }
            try apply(key, value, to: &parts, invalid)
        }

        let resolvedUser = (parts.user?.isEmpty == false ? parts.user : nil) ?? Self.systemUserName()
        guard let resolvedUser, !resolvedUser.isEmpty else { throw invalid("it names no user") }
        endpoints = try Self.endpoints(hosts: parts.hosts, ports: parts.ports, invalid)
        endpoint = endpoints[0]
        self.user = resolvedUser
        self.password = parts.password
        self.database = (parts.database?.isEmpty == false ? parts.database : nil) ?? resolvedUser
    }

    /// What the URL says apart from the settings: read from its parts, then from its parameters.
    private struct Parts {
        var hosts: [String] = []
        var ports: [Substring] = []
        var user: String?
        var password: String?
        var database: String?
    }

    /// One `key=value` parameter of the URL's query.
    private mutating func apply(
        _ key: String, _ value: String, to parts: inout Parts, _ invalid: (String) -> PostgresStoreError
    ) throws(PostgresStoreError) {
        switch key {
        case "sslmode":
            guard let mode = SSLMode(rawValue: value) else {
                let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw invalid("sslmode=\(value) is not one of \(known)")
            }
            sslMode = mode
        case "target_session_attrs":
            guard let target = TargetSession(rawValue: value) else {
                let known = TargetSession.allCases.map(\.rawValue).joined(separator: ", ")
                throw invalid("target_session_attrs=\(value) is not one of \(known)")
            }
            targetSession = target
        // libpq: host= and port= may be comma-separated lists, one entry per server.
        case "host": parts.hosts = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        case "port": parts.ports = value.split(separator: ",", omittingEmptySubsequences: false)
        case "user": parts.user = value
        case "password": parts.password = value
        case "dbname": parts.database = value
        case "sslrootcert": sslRootCertificate = value.isEmpty || value == "system" ? nil : value
        case "connect_timeout":
            guard let seconds = Int(value), seconds >= 0 else {
                throw invalid("connect_timeout=\(value) is not a number of seconds")
            }
            connectTimeout = seconds == 0 ? nil : seconds
        case "application_name": applicationName = value
        default:
            throw invalid(
                "the parameter \(key) is not supported (use sslmode, sslrootcert, host, port, user, "
                    + "password, dbname, connect_timeout, application_name or target_session_attrs)")
        }
    }

    /// One `host[:port]` of the URL's host list (an IPv6 address in brackets); the host percent-decoded.
    private static func hostAndPort(
        _ item: Substring, _ invalid: (String) -> PostgresStoreError
    ) throws(PostgresStoreError) -> (host: String, port: Substring?) {
        if item.hasPrefix("[") {
            guard let close = item.firstIndex(of: "]") else { throw invalid("an IPv6 address lacks its closing ]") }
            let host = String(item[item.index(after: item.startIndex)..<close])
            let after = item[item.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
            return (host, after.isEmpty ? nil : after.dropFirst())
        }
        var host = item
        var port: Substring?
        if let colon = item.firstIndex(of: ":") {
            port = item[item.index(after: colon)...]
            host = item[..<colon]
        }
        return (try decode(host, what: "the host", invalid), port)
    }

    /// Pairs the hosts with the ports as libpq does: one port for every host, or one port each.
    private static func endpoints(
        hosts: [String], ports: [Substring], _ invalid: (String) -> PostgresStoreError
    ) throws(PostgresStoreError) -> [Endpoint] {
        let hosts = hosts.isEmpty ? [""] : hosts
        guard ports.count <= 1 || ports.count == hosts.count else {
            throw invalid(
                "it names \(hosts.count) hosts and \(ports.count) ports; "
                    + "give one port for all, or one per host")
        }
        var endpoints: [Endpoint] = []
        for (number, host) in hosts.enumerated() {
            let portText = ports.isEmpty ? "" : ports[ports.count == 1 ? 0 : number]
            var port = defaultPort
            if !portText.isEmpty {
                guard let value = Int(portText), (1...65_535).contains(value) else {
                    throw invalid("the port \(portText) is not a number from 1 to 65535")
                }
                port = value
            }
            if host.hasPrefix("/") {
                endpoints.append(.unixSocket(directory: host, port: port))
            } else if !host.isEmpty {
                endpoints.append(.tcp(host: host, port: port))
            } else {
                let folder = AtomicFileSystem.exists("/var/run/postgresql") ? "/var/run/postgresql" : "/tmp"
                endpoints.append(.unixSocket(directory: folder, port: port))
            }
        }
        return endpoints
    }

    /// The same server and settings, connecting to `endpoint` (one of `endpoints`).
    package func connecting(to endpoint: Endpoint) -> PostgresLocation {
        var location = self
        location.endpoint = endpoint
        return location
    }

    /// Every server, for messages: `h1:5432, h2:5433`.
    package var servers: String {
        endpoints.map { connecting(to: $0).server }.joined(separator: ", ")
    }

    /// Where the server is, for messages: `host:port` or the socket file.
    package var server: String {
        switch endpoint {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unixSocket: return socketPath ?? ""
        }
    }

    /// The socket file of a unix socket endpoint.
    package var socketPath: String? {
        guard case .unixSocket(let directory, let port) = endpoint else { return nil }
        return (directory.hasSuffix("/") ? directory : directory + "/") + ".s.PGSQL.\(port)"
    }

    /// The URL without its password.
    package var description: String {
        var query: [String] = []
        var hostPart = ""
        if endpoints.count == 1, case .unixSocket(let directory, let port) = endpoint {
            hostPart = port == Self.defaultPort ? "" : ":\(port)"
            query.append("host=\(directory)")
        } else if endpoints.count == 1 {
            hostPart = server
        } else {
            // Several servers: the TCP ones in the authority; socket folders, with their ports,
            // as host= and port= lists.
            hostPart = endpoints.compactMap { if case .tcp = $0 { connecting(to: $0).server } else { nil } }
                .joined(separator: ",")
            let sockets = endpoints.compactMap {
                if case .unixSocket(let directory, let port) = $0 { (directory, port) } else { nil }
            }
            if !sockets.isEmpty {
                query.append("host=" + sockets.map(\.0).joined(separator: ","))
                query.append("port=" + sockets.map { String($0.1) }.joined(separator: ","))
            }
        }
        let hasTCP = endpoints.contains { if case .tcp = $0 { true } else { false } }
        if sslMode != .prefer, hasTCP { query.append("sslmode=\(sslMode.rawValue)") }
        if targetSession != .any { query.append("target_session_attrs=\(targetSession.rawValue)") }
        return "postgres://\(user)@\(hostPart)/\(database)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    private static func decode(_ text: Substring, what: String, _ invalid: (String) -> PostgresStoreError)
        throws(PostgresStoreError) -> String
    {
        guard let decoded = String(text).removingPercentEncoding else {
            throw invalid("\(what) has a bad percent-encoding")
        }
        return decoded
    }

    private static func systemUserName() -> String? {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"]
    }
}
