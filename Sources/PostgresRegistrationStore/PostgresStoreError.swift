import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import RegistrationStore

/// What went wrong with the PostgreSQL registration store, said for people:
/// where the server is, what it answered, what to check. Never the password,
/// never the query's values, never a stack or a `PSQLError` dump.
package struct PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    LocalizedError
{
    package enum Kind: String, Sendable, Equatable {
        /// PASSFORGE_DATABASE_URL cannot be parsed.
        case invalidURL
        /// No connection could be made (refused, timed out, unknown host).
        case unreachable
        /// The server refused the user or password.
        case authenticationFailed
        /// The database named in the URL does not exist.
        case databaseMissing
        /// TLS could not be set up as `sslmode` asks.
        case tls
        /// An open connection broke while a request used it.
        case connectionLost
        /// The server is there but cannot serve now (starting, shutting down, too many connections).
        case unavailable
        /// No connection became free in time.
        case timedOut
        /// The store was shut down.
        case shutDown
        /// The server rejected a statement.
        case server
    }

    package var kind: Kind
    package var description: String
    /// The server's SQLSTATE, when the server said something.
    package var sqlState: String?

    package init(kind: Kind, description: String, sqlState: String? = nil) {
        self.kind = kind
        self.description = description
        self.sqlState = sqlState
    }

    /// Whether the database is out of reach for now: a web service answers
    /// 503 and the client tries again later.
    package var isUnavailable: Bool {
        switch kind {
        case .unreachable, .connectionLost, .unavailable, .timedOut, .shutDown: return true
        case .invalidURL, .authenticationFailed, .databaseMissing, .tls, .server: return false
        }
    }

    package var debugDescription: String { description }
    package var errorDescription: String? { description }

    static let check = "check \(StoreLocation.environmentVariable) and that the server is running"

    // MARK: Translating postgres-nio's errors

    /// Turns any error of postgres-nio, NIO or NIOSSL into a `PostgresStoreError`;
    /// nil for other errors (the caller's own, `RegistrationStoreError.pushLockBusy`, cancellation), which pass unchanged.
    static func translate(_ error: any Error, at location: PostgresLocation) -> PostgresStoreError? {
        switch error {
        case let error as PostgresStoreError:
            return error
        case let error as PSQLError:
            return fromPSQL(error, at: location)
        case is ConnectionClosed:
            return PostgresStoreError(
                kind: .connectionLost,
                description: "lost the connection to PostgreSQL at \(location.server) (it closed); \(check)")
        case let error as PostgresTransactionError:
            let inner = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
            return inner.flatMap { translate($0, at: location) }
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return tlsFailed(location, reason: reason(error))
        case is IOError, is NIOConnectionError, is ChannelError:
            return unreachable(location, reason: reason(error))
        default:
            return nil
        }
    }

    static func fromPSQL(_ error: PSQLError, at location: PostgresLocation) -> PostgresStoreError {
        let server = location.server
        switch error.code {
        case .server:
            return fromServer(error, at: location)
        case .connectionError:
            if let underlying = error.underlying, isTLS(underlying) {
                return tlsFailed(location, reason: reason(underlying))
            }
            return unreachable(location, reason: error.underlying.map(reason) ?? "the connection failed")
        case .serverClosedConnection, .uncleanShutdown:
            if let underlying = error.underlying, isTLS(underlying) {
                return tlsFailed(location, reason: reason(underlying))
            }
            let why = error.underlying.map { ": " + reason($0) } ?? ""
            return PostgresStoreError(
                kind: .connectionLost,
                description: "lost the connection to PostgreSQL at \(server)\(why); \(check)")
        case .clientClosedConnection:
            return PostgresStoreError(
                kind: .connectionLost,
                description: "the connection to PostgreSQL at \(server) was closed while in use; \(check)")
        case .sslUnsupported:
            return PostgresStoreError(
                kind: .tls,
                description:
                    "PostgreSQL at \(server) does not offer TLS, and sslmode=\(location.sslMode.rawValue) requires it; turn on ssl in the server or use sslmode=prefer or disable"
            )
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return tlsFailed(location, reason: error.underlying.map(reason) ?? "\(error.code)")
        case .authMechanismRequiresPassword:
            return PostgresStoreError(
                kind: .authenticationFailed,
                description:
                    "PostgreSQL at \(server) asks user \"\(location.user)\" for a password, and \(StoreLocation.environmentVariable) gives none (postgres://USER:PASSWORD@HOST/DATABASE)"
            )
        case .unsupportedAuthMechanism:
            return PostgresStoreError(
                kind: .authenticationFailed,
                description:
                    "PostgreSQL at \(server) asks user \"\(location.user)\" to log in with a method passforge does not support; use scram-sha-256, md5 or password in pg_hba.conf"
            )
        case .saslError:
            return PostgresStoreError(
                kind: .authenticationFailed,
                description:
                    "authentication failed for user \"\(location.user)\" at PostgreSQL \(server) (SCRAM exchange failed); check the user and password in \(StoreLocation.environmentVariable)"
            )
        case .poolClosed:
            return PostgresStoreError(
                kind: .shutDown, description: "the PostgreSQL registration store (\(location)) was shut down")
        case .queryCancelled:
            return PostgresStoreError(
                kind: .unavailable, description: "a request to PostgreSQL at \(server) was cancelled")
        default:
            return PostgresStoreError(
                kind: .server,
                description: "PostgreSQL at \(server) failed: \(error.code)"
                    + (error.underlying.map { " (\(reason($0)))" } ?? ""))
        }
    }

    private static func fromServer(_ error: PSQLError, at location: PostgresLocation) -> PostgresStoreError {
        let server = location.server
        let state = error.serverInfo?[.sqlState]
        let message = error.serverInfo?[.message] ?? "an unknown error"
        let detail = error.serverInfo?[.detail].map { " (\($0))" } ?? ""
        switch state {
        case "28P01", "28000":
            // "password authentication failed for user \"x\"" / "no pg_hba.conf entry for …"
            return PostgresStoreError(
                kind: .authenticationFailed,
                description:
                    "authentication failed for user \"\(location.user)\" at PostgreSQL \(server): \(message); check the user and password in \(StoreLocation.environmentVariable)",
                sqlState: state)
        case "3D000":
            return PostgresStoreError(
                kind: .databaseMissing,
                description:
                    "the database \"\(location.database)\" does not exist on PostgreSQL at \(server); create it (createdb \(location.database)) or fix the database name in \(StoreLocation.environmentVariable)",
                sqlState: state)
        case "57P01", "57P02":
            // The server ended the session: shutting down, or recovering from a crash.
            return PostgresStoreError(
                kind: .connectionLost,
                description: "lost the connection to PostgreSQL at \(server): \(message); \(check)",
                sqlState: state)
        case "25006":
            // read_only_sql_transaction: a standby, or a primary being demoted. With several hosts the
            // store looks for the one that accepts writes now (target_session_attrs=read-write).
            return PostgresStoreError(
                kind: .unavailable,
                description: "PostgreSQL at \(server) accepts no writes now (\(message)); "
                    + "it is a standby: name the primary too, with target_session_attrs=read-write",
                sqlState: state)
        case "57P03", "53300", "53400":
            // Starting up or shutting down, too many connections.
            return PostgresStoreError(
                kind: .unavailable,
                description: "PostgreSQL at \(server) cannot serve now: \(message)",
                sqlState: state)
        case let state? where state.hasPrefix("08"):
            return PostgresStoreError(
                kind: .connectionLost,
                description: "lost the connection to PostgreSQL at \(server): \(message); \(check)",
                sqlState: state)
        default:
            return PostgresStoreError(
                kind: .server,
                description: "PostgreSQL at \(server) rejected a request of the registration store: \(message)\(detail)"
                    + (state.map { " (SQLSTATE \($0))" } ?? ""),
                sqlState: state)
        }
    }

    static func unreachable(_ location: PostgresLocation, reason: String) -> PostgresStoreError {
        PostgresStoreError(
            kind: .unreachable, description: "cannot reach PostgreSQL at \(location.server): \(reason); \(check)")
    }

    static func tlsFailed(_ location: PostgresLocation, reason: String) -> PostgresStoreError {
        let mode = location.sslMode
        let hint =
            mode == .verifyFull || mode == .verifyCA
            ? "; with sslmode=\(mode.rawValue) the server's certificate must chain to sslrootcert (or the system's roots)"
                + (mode == .verifyFull ? " and name the host" : "")
            : ""
        return PostgresStoreError(
            kind: .tls, description: "cannot set up TLS with PostgreSQL at \(location.server): \(reason)\(hint)")
    }

    static func isTLS(_ error: any Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError
    }

    /// A short reason for a connection-level error, without NIO's type dumps.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return systemMessage(error.errnoCode)
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the host name \(error.host) cannot be resolved"
            }
            if let first = error.connectionErrors.first { return reason(first.error) }
            return "no address of \(error.host) answered"
        case let error as ChannelError:
            switch error {
            case .connectTimeout(let amount):
                return "no answer within \(amount.nanoseconds / 1_000_000_000) s"
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed:
                return "the connection was closed"
            default:
                return "\(error)"
            }
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let inner):
                return "the TLS handshake failed (\(tlsReason(inner)))"
            default:
                return "TLS failed (\(error))"
            }
        case let error as BoringSSLError:
            return "TLS failed (\(tlsReason(error)))"
        case let error as NIOSSLExtraError:
            return "TLS failed (\(error))"
        case let error as PSQLError:
            return error.underlying.map(reason) ?? "\(error.code)"
        case let error as SocketAddressError:
            switch error {
            case .unknown(let host, _): return "the host name \(host) cannot be resolved"
            default: return "\(error)"
            }
        default:
            return String(describing: error)
        }
    }

    private static func tlsReason(_ error: BoringSSLError) -> String {
        let text = String(describing: error)
        // BoringSSL's stack reads like "…:CERTIFICATE_VERIFY_FAILED…"; keep the telling part.
        for known in ["CERTIFICATE_VERIFY_FAILED", "WRONG_VERSION_NUMBER", "TLSV1_ALERT", "SSLV3_ALERT"]
        where text.contains(known) {
            if known == "CERTIFICATE_VERIFY_FAILED" {
                return "the server's certificate is not trusted or does not name the host"
            }
            return known.lowercased().replacingOccurrences(of: "_", with: " ")
        }
        return text
    }

    private static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        let message = String(cString: text)
        guard let first = message.first else { return "error \(code)" }
        return first.lowercased() + message.dropFirst()
    }
}
