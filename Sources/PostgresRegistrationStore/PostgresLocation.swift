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

    package var endpoint: Endpoint
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

    package init(endpoint: Endpoint, user: String, password: String?, database: String,
                sslMode: SSLMode = .prefer, sslRootCertificate: String? = nil) {
        self.endpoint = endpoint
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
            PostgresStoreError(kind: .invalidURL,
                               description: "\(StoreLocation.environmentVariable) is not a valid PostgreSQL URL (\(StoreLocation.redacted(text))): \(reason)")
        }
        guard let schemeEnd = text.range(of: "://"),
              ["postgres", "postgresql"].contains(text[..<schemeEnd.lowerBound].lowercased()) else {
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
        var pathText: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            pathText = rest[rest.index(after: slash)...]
        }

        var host: String?
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw invalid("an IPv6 address lacks its closing ]") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else {
            if hostPort.contains(",") { throw invalid("several hosts are not supported; name one") }
            if let colon = hostPort.firstIndex(of: ":") {
                portText = hostPort[hostPort.index(after: colon)...]
                hostPort = hostPort[..<colon]
            }
            if !hostPort.isEmpty { host = try Self.decode(hostPort, what: "the host", invalid) }
        }

        var database: String?
        if !pathText.isEmpty { database = try Self.decode(pathText, what: "the database name", invalid) }
        var sslMode = SSLMode.prefer
        var sslRootCertificate: String?
        var connectTimeout: Int?
        var applicationName: String?
        for pair in queryText.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(parts[0], what: "a parameter name", invalid)
            var value = ""
            if parts.count > 1 { value = try Self.decode(parts[1], what: "the value of \(key)", invalid) }
            switch key {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw invalid("sslmode=\(value) is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sslMode = mode
            case "host": host = value
            case "port": portText = Substring(value)
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "sslrootcert": sslRootCertificate = value.isEmpty || value == "system" ? nil : value
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 0 else { throw invalid("connect_timeout=\(value) is not a number of seconds") }
                connectTimeout = seconds == 0 ? nil : seconds
            case "application_name": applicationName = value
            default:
                throw invalid("the parameter \(key) is not supported (use sslmode, sslrootcert, host, port, user, password, dbname, connect_timeout or application_name)")
            }
        }

        var port = Self.defaultPort
        if let portText, !portText.isEmpty {
            guard let value = Int(portText), (1...65_535).contains(value) else { throw invalid("the port \(portText) is not a number from 1 to 65535") }
            port = value
        }
        let resolvedUser = (user?.isEmpty == false ? user : nil) ?? Self.systemUserName()
        guard let resolvedUser, !resolvedUser.isEmpty else { throw invalid("it names no user") }

        if let host, host.hasPrefix("/") {
            endpoint = .unixSocket(directory: host, port: port)
        } else if let host, !host.isEmpty {
            endpoint = .tcp(host: host, port: port)
        } else {
            let folder = AtomicFileSystem.exists("/var/run/postgresql") ? "/var/run/postgresql" : "/tmp"
            endpoint = .unixSocket(directory: folder, port: port)
        }
        self.user = resolvedUser
        self.password = password
        self.database = (database?.isEmpty == false ? database : nil) ?? resolvedUser
        self.sslMode = sslMode
        self.sslRootCertificate = sslRootCertificate
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
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
        let hostPart: String
        switch endpoint {
        case .tcp: hostPart = server
        case .unixSocket(let directory, let port):
            hostPart = port == Self.defaultPort ? "" : ":\(port)"
            query.append("host=\(directory)")
        }
        if sslMode != .prefer, case .tcp = endpoint { query.append("sslmode=\(sslMode.rawValue)") }
        return "postgres://\(user)@\(hostPart)/\(database)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    private static func decode(_ text: Substring, what: String, _ invalid: (String) -> PostgresStoreError) throws(PostgresStoreError) -> String {
        guard let decoded = String(text).removingPercentEncoding else { throw invalid("\(what) has a bad percent-encoding") }
        return decoded
    }

    private static func systemUserName() -> String? {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"]
    }
}
