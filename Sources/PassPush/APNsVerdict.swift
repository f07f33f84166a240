import AsyncHTTPClient
package import Foundation
import NIOCore
import NIOPosix
import NIOSSL
package import PassModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What to do after one attempt at one push, following Apple's "Handling
/// notification responses from APNs": 200 delivered; 410 Unregistered and 400
/// BadDeviceToken mean a dead token; 429 and 5xx are retried; 403 and other
/// errors mean every push of the run would fail the same way.
package enum APNsVerdict: Sendable, Equatable {
    /// 200: APNs took the push.
    case delivered(apnsID: String?)
    /// 410, or 400 BadDeviceToken: the token is dead; the caller deletes its
    /// registrations (those older than `since`, when APNs gives a timestamp).
    case tokenInvalid(since: Date?, reason: String)
    /// 429, 5xx or a transport failure: try again after a backoff.
    case retry(APNsRetryCause)
    /// A problem that every other push of this run would hit too (wrong
    /// certificate, wrong topic, not APNs at all…): stop and tell a person.
    case stop(APNsStopReason)
}

/// Why an attempt is worth repeating.
package enum APNsRetryCause: Sendable, Equatable, CustomStringConvertible {
    /// APNs answered 429, 500, 503…
    case status(Int, reason: String?)
    /// No connection could be made (refused, unreachable, DNS, connect timeout).
    case connect(String)
    /// The server closed every connection during the TLS/HTTP/2 setup (see
    /// `APNsClientError.closedDuringSetup`): likely a refused client certificate.
    case setup(String)
    /// The connection broke under the request: GOAWAY, reset, closed, timed out.
    case transport(String)

    package var description: String {
        switch self {
        case .status(let status, let reason): "APNs answered \(status)\(reason.map { " \($0)" } ?? "")"
        case .connect(let detail): "could not connect: \(detail)"
        case .setup(let detail): detail
        case .transport(let detail): "connection failed: \(detail)"
        }
    }
}

/// Why a whole push run stopped, phrased for the person running it.
package struct APNsStopReason: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// 403: APNs does not accept the client certificate for this topic.
        case certificateRejected
        /// 400 DeviceTokenNotForTopic / TopicDisallowed / BadTopic / MissingTopic.
        case wrongTopic
        /// 413 or another 4xx: the request itself is wrong.
        case requestRejected
        /// The TLS handshake failed (server not trusted, client certificate refused).
        case tlsFailure
        /// The server is not speaking HTTP/2, so it is not APNs.
        case notHTTP2
        /// No connection could be made at all.
        case unreachable
        /// Bad URL, identity or topic.
        case invalidConfiguration
    }

    package var kind: Kind
    /// The HTTP status, when APNs answered.
    package var status: Int?
    /// APNs's `reason`, when it gave one.
    package var apnsReason: String?
    /// What is wrong and what to do about it.
    package var message: String

    package init(kind: Kind, status: Int? = nil, apnsReason: String? = nil, message: String) {
        self.kind = kind
        self.status = status
        self.apnsReason = apnsReason
        self.message = message
    }

    package var description: String { message }
}

extension APNsVerdict {
    /// Classifies an answer from APNs to a push for `topic`, a type of `kind` (which names its certificate).
    package init(_ response: APNsResponse, topic: String, kind: WalletItemKind = .pass, endpoint: APNsEndpoint) {
        let certificate = kind.certificateName
        let status = response.status
        if status == 200 {
            self = .delivered(apnsID: response.apnsID)
            return
        }
        let reason = response.reason
        let answered = "APNs answered \(status)\(reason.map { " \($0)" } ?? "")"
        switch (status, reason) {
        case (410, _):
            // Unregistered (or ExpiredToken): the body's timestamp says since when.
            self = .tokenInvalid(since: response.timestamp, reason: reason ?? "Unregistered")
        case (400, "BadDeviceToken"):
            self = .tokenInvalid(since: nil, reason: "BadDeviceToken")
        case (400, "IdleTimeout"), (429, _), (500...599, _):
            // IdleTimeout: APNs closed an idle connection under us; a new one will do.
            self = .retry(.status(status, reason: reason))
        case (403, "BadCertificateEnvironment"):
            self = .stop(
                APNsStopReason(
                    kind: .certificateRejected, status: status, apnsReason: reason,
                    message: """
                        \(answered): the client certificate is for the other APNs environment. Passes only use \
                        production (https://api.push.apple.com); use the \(certificate) for \(topic).
                        """))
        case (403, _):
            self = .stop(
                APNsStopReason(
                    kind: .certificateRejected, status: status, apnsReason: reason,
                    message: """
                        \(answered): APNs does not accept the client certificate for topic \(topic). Use the \(certificate) \
                        that signs the \(kind.noun)s (its UID must be \(topic)), with its private key, and check that it \
                        has not expired or been revoked in the Apple Developer portal.
                        """))
        case (400, "DeviceTokenNotForTopic"), (400, "TopicDisallowed"), (400, "BadTopic"), (400, "MissingTopic"):
            self = .stop(
                APNsStopReason(
                    kind: .wrongTopic, status: status, apnsReason: reason,
                    message: """
                        \(answered) for topic \(topic): the apns-topic must be the \(kind.typeIdentifierKey) of the \(kind.noun)s and \
                        the certificate's UID. Check \(kind.typeIdentifierKey) in the project and that the certificate is the \
                        \(certificate) for it.
                        """))
        case (413, _):
            self = .stop(
                APNsStopReason(
                    kind: .requestRejected, status: status, apnsReason: reason,
                    message: """
                        \(answered) (payload too large), yet pass pushes send an empty {} body: something between passforge \
                        and APNs changes the request. Check PASSFORGE_APNS_URL (now \(endpoint.baseURL)).
                        """))
        case (404, _), (405, _):
            self = .stop(
                APNsStopReason(
                    kind: .requestRejected, status: status, apnsReason: reason,
                    message: """
                        \(answered) to POST /3/device/<token>: \(endpoint.baseURL) does not look like APNs. Check \
                        PASSFORGE_APNS_URL (default https://api.push.apple.com).
                        """))
        default:
            self = .stop(
                APNsStopReason(
                    kind: .requestRejected, status: status, apnsReason: reason,
                    message: """
                        \(answered) to a pass push for topic \(topic); passforge stops rather than repeat a request APNs \
                        rejects. See Apple's "Handling notification responses from APNs" for this reason.
                        """))
        }
    }

    /// Classifies an error thrown while sending a push.
    package init(error: any Error, topic: String, kind: WalletItemKind = .pass, endpoint: APNsEndpoint) {
        switch error {
        case let error as APNsClientError:
            switch error {
            case .malformedToken:
                self = .tokenInvalid(since: nil, reason: "malformed token")
            case .notHTTP2:
                self = .stop(APNsStopReason(kind: .notHTTP2, message: error.description))
            case .closedDuringSetup:
                self = .retry(.setup(error.description))
            case .invalidConfiguration, .invalidIdentity, .invalidTopic, .shutDown:
                self = .stop(APNsStopReason(kind: .invalidConfiguration, message: error.description))
            }
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed, .unableToValidateCertificate, .noCertificateToValidate, .failedToLoadCertificate,
                .failedToLoadPrivateKey:
                self = .stop(Self.tlsFailure(String(describing: error), endpoint: endpoint, topic: topic, kind: kind))
            default:
                // e.g. uncleanShutdown: the connection was cut under a request.
                self = .retry(.transport(String(describing: error)))
            }
        case let error as NIOSSLExtraError:
            self = .stop(Self.tlsFailure(String(describing: error), endpoint: endpoint, topic: topic, kind: kind))
        case let error as NIOConnectionError:
            self = .retry(.connect(Self.describe(error)))
        case let error as IOError where Self.connectErrnos.contains(error.errnoCode):
            self = .retry(.connect(error.description))
        case let error as ChannelError:
            if case .connectTimeout = error {
                self = .retry(.connect("connect timed out"))
            } else {
                self = .retry(.transport(String(describing: error)))
            }
        case let error as HTTPClientError where error == .connectTimeout:
            self = .retry(.connect("connect timed out"))
        case let error as HTTPClientError where error == .alreadyShutdown:
            self = .stop(APNsStopReason(kind: .invalidConfiguration, message: APNsClientError.shutDown.description))
        default:
            self = .retry(.transport(String(describing: error)))
        }
    }

    private static let connectErrnos: Set<Int32> = [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ETIMEDOUT]

    private static func describe(_ error: NIOConnectionError) -> String {
        if let dns = error.dnsAError ?? error.dnsAAAAError {
            return "cannot resolve \(error.host): \(dns)"
        }
        if let first = error.connectionErrors.first {
            return "\(first.error)"
        }
        return "connection to \(error.host):\(error.port) failed"
    }

    static func tlsFailure(_ detail: String, endpoint: APNsEndpoint, topic: String, kind: WalletItemKind = .pass)
        -> APNsStopReason
    {
        APNsStopReason(
            kind: .tlsFailure,
            message: """
                The TLS handshake with \(endpoint) failed (\(detail)). Check that the client certificate is the \
                \(kind.certificateName) for \(topic) with its matching private key and intermediate (WWDR), that it has not \
                expired, and—for a test server only—PASSFORGE_APNS_CA_CERTIFICATE.
                """)
    }
}

extension APNsRetryCause {
    /// Whether the attempt never got an HTTP/2 connection to the server.
    var neverReachedServer: Bool {
        switch self {
        case .connect, .setup: true
        case .status, .transport: false
        }
    }
}
