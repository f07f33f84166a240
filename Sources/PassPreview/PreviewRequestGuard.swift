import Hummingbird
import Synchronization

/// The `Host` names the `preview --watch` server answers: the loopback
/// names and the address it is bound to, each with no port or the bound
/// port. Binding to 127.0.0.1 keeps other machines out, not other web
/// sites: a page the editor visits can rebind its own name to 127.0.0.1
/// (DNS rebinding) and read the preview as same-origin, but its requests
/// still carry its own name in `Host`, which is refused here.
package struct PreviewHostRule: Sendable {
    /// Lower-cased host names; IPv6 addresses in brackets, as in `Host`.
    package let names: Set<String>

    package init(boundHost: String) {
        var names: Set<String> = ["localhost", "127.0.0.1", "[::1]"]
        let bound = boundHost.lowercased()
        names.insert(bound.contains(":") && !bound.hasPrefix("[") ? "[\(bound)]" : bound)
        self.names = names
    }

    package enum Verdict: Equatable, Sendable {
        case allowed
        /// Another name, or another port: 403.
        case foreign
        /// No `Host`, several, or not `host[:port]` (RFC 9112 §3.2, RFC 3986 §3.2.2): 400.
        case malformed
    }

    /// The verdict on the `Host` values of one request, for a server bound to `port`.
    package func verdict(hosts: [String], port: Int) -> Verdict {
        guard hosts.count == 1, let host = hosts.first, !host.isEmpty else { return .malformed }
        let name: Substring
        let portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return .malformed }
            name = host[...close]
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || rest.first == ":" else { return .malformed }
            portText = rest.isEmpty ? nil : rest.dropFirst()
            guard name.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return .malformed
            }
        } else {
            let parts = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            name = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") })
            else { return .malformed }
        }
        guard name.count > (host.hasPrefix("[") ? 2 : 0) else { return .malformed }
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return .malformed
            }
            guard portText == String(port) else { return .foreign }
        }
        return names.contains(name.lowercased()) ? .allowed : .foreign
    }
}

/// The request paths the preview looks a file up by. A path is percent-decoded
/// before it names a file, and a file name goes to the C library, which ends it
/// at the first NUL: `/index.html%00.png` would read `index.html` (and hand it
/// out under whatever the part after the NUL suggests). So a path whose decoded
/// bytes hold a NUL or any other control character (Unicode's Cc: U+0000–U+001F,
/// U+007F–U+009F), a stray `%`, or bytes that are not UTF-8 is refused (400)
/// before any route sees it. No file the gallery writes has such a name.
package enum PreviewPathRule {
    package static func isAcceptable(_ rawPath: some StringProtocol) -> Bool {
        guard let decoded = percentDecoded(rawPath.utf8), let text = String(validating: decoded, as: UTF8.self) else {
            return false
        }
        return !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The bytes of `raw` with each `%XX` replaced by its byte; nil for a `%` not followed by two hex digits.
    private static func percentDecoded(_ raw: some Collection<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var iterator = raw.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The port the server was bound to (known once it runs: `--port 0` picks one).
final class BoundPort: Sendable {
    private let value: Atomic<Int>
    init(_ port: Int) { value = Atomic(port) }
    var port: Int { value.load(ordering: .relaxed) }
    func set(_ port: Int) { value.store(port, ordering: .relaxed) }
}

/// Every answer of the --watch server goes through here: a request for a
/// name the preview does not have, or for a path `PreviewPathRule` refuses,
/// is refused before any route sees it,
/// and every response, refusals and errors included, is marked
/// `X-Content-Type-Options: nosniff` (the browser never guesses HTML from
/// a file served as something else) and `Cache-Control: no-store` (pages
/// change with every edit, and show a project's data).
struct PreviewRequestGuard<Context: RequestContext>: RouterMiddleware {
    let rule: PreviewHostRule
    let boundPort: BoundPort

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // NIO's conversion moves the first `Host` to `authority`; a second one stays among the fields.
        let hosts =
            (request.head.authority.map { [$0] } ?? [])
            + request.headers.filter { $0.name.canonicalName == "host" }.map(\.value)
        var response: Response
        switch rule.verdict(hosts: hosts, port: boundPort.port) {
        case .malformed:
            response = Self.refusal(.badRequest, "a request to the preview needs one Host header: host or host:port\n")
        case .foreign:
            let names = rule.names.sorted().joined(separator: ", ")
            response = Self.refusal(
                .forbidden,
                "the preview answers only requests for \(names) (port "
                    + "\(boundPort.port)); open it by one of these names\n")
        case .allowed where !PreviewPathRule.isAcceptable(request.uri.path):
            response = Self.refusal(
                .badRequest,
                "a path to the preview holds no control character (NUL included), "
                    + "stray '%' or bytes that are not UTF-8\n")
        case .allowed:
            do {
                response = try await next(request, context)
            } catch let error as any HTTPResponseError {
                response = try error.response(from: request, context: context)
            }
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    static func refusal(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
