import Foundation
package import Hummingbird
import PassModel

/// A 4xx (or the rare 5xx) answer: a short JSON body `{"error":"…"}` that
/// never echoes a token or a request body, so no input is reflected back.
package struct APIError: Error, HTTPResponseError, Sendable {
    package var status: HTTPResponse.Status
    package var message: String
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    package func response() -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        let body = ByteBuffer(string: #"{"error":"\#(JSONText.escape(message))"}"# + "\n")
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// The one 401 of a kind: the same for a missing, malformed or wrong token and for no such item
    /// (the static-host configs in deploy/ answer these very bytes).
    static func unauthorized(_ kind: WalletItemKind) -> APIError {
        kind == .pass ? unauthorizedPass : unauthorizedOrder
    }

    private static let unauthorizedPass = unauthorizedAnswer(.pass)
    private static let unauthorizedOrder = unauthorizedAnswer(.order)

    private static func unauthorizedAnswer(_ kind: WalletItemKind) -> APIError {
        APIError(
            .unauthorized, "missing, malformed or wrong Authorization: \(kind.authorizationScheme) token",
            headers: [.wwwAuthenticate: kind.authorizationScheme])
    }
    static let notFound = APIError(.notFound, "no such resource")

    static func methodNotAllowed(_ allowed: [HTTPRequest.Method]) -> APIError {
        APIError(
            .methodNotAllowed, "method not allowed; use \(allowed.map(\.rawValue).joined(separator: " or "))",
            headers: [.allow: allowed.map(\.rawValue).joined(separator: ", ")])
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }

    /// A body that cannot be read: bad chunked encoding, an unknown
    /// Transfer-Encoding, or a client that stopped sending. The connection
    /// cannot carry another request.
    static let malformedBody = APIError(
        .badRequest, "malformed or incomplete request body", headers: [.connection: "close"])

    static let requestTimeout = APIError(
        .requestTimeout, "request not received in time", headers: [.connection: "close"])

    static func contentTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "request body larger than \(limit) bytes", headers: [.connection: "close"])
    }
}

enum JSONText {
    /// Escapes a string for a JSON string literal (the messages are ours, but be safe).
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
