import Foundation
import Hummingbird
import NIOCore
import WalletTree

/// The landing pages beside the download links (`passforge build`), their logos and the project's badges,
/// served as the static hosts of deploy/ serve them: HTML never indexed, sent with no referrer onward and
/// under the pages' Content-Security-Policy. `download/<capability>.html` answers in the language the browser
/// asks for first (Accept-Language) when the item has a page in it (`download/<capability>.<language>.html`).
enum LandingPageResponse {
    /// `<capability>.html`, `<capability>.<language>.html`, `<name>.png` or `<name>.svg` (TreeLayout's landing names).
    static func isLandingFile(_ name: String) -> Bool {
        (name.hasSuffix(".html") || name.hasSuffix(".png") || name.hasSuffix(".svg")) && !name.hasPrefix(".")
            && TreeLayout.isBuildOwned("\(TreeLayout.downloadFolder)/\(name)")
    }

    /// The languages of an Accept-Language header, most wanted first (at most 8, each `[A-Za-z0-9-]`, q > 0),
    /// each followed by its base language (`fr` after `fr-CA`).
    static func languages(_ header: String?) -> [String] {
        guard let header else { return [] }
        var weighted: [(tag: String, q: Double, order: Int)] = []
        for (order, part) in header.split(separator: ",").prefix(8).enumerated() {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, (1...35).contains(tag.utf8.count), tag != "*",
                tag.utf8.allSatisfy({ IdentifierCharacters.isLanguage($0) })
            else { continue }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if q > 0 { weighted.append((tag, q, order)) }
        }
        var result: [String] = []
        for entry in weighted.sorted(by: { ($0.q, -$0.order) > ($1.q, -$1.order) }) {
            for tag in [entry.tag, String(entry.tag.prefix { $0 != "-" })] where !result.contains(tag) {
                result.append(tag)
            }
        }
        return result
    }

    static func contentType(of path: String) -> String {
        path.hasSuffix(".html") ? "text/html; charset=utf-8" : path.hasSuffix(".png") ? "image/png" : "image/svg+xml"
    }
}

private enum IdentifierCharacters {
    static func isLanguage(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-")
    }
}

extension PassWebService {
    /// A landing page (negotiated by Accept-Language), a logo or a badge: 200, or 304 for its ETag; 404 when absent.
    func landingResponse(_ request: Request, path: String) async throws -> Response {
        var chosen = path
        var representation: PublishedTree.Representation?
        let isDefaultPage = path.hasSuffix(".html") && TreeLayout.fileName(of: path).split(separator: ".").count == 2
        if isDefaultPage {
            let stem = path.dropLast(".html".count)
            for language in LandingPageResponse.languages(request.headers[.acceptLanguage]) {
                if let found = try await tree.representation(of: "\(stem).\(language).html") {
                    (chosen, representation) = ("\(stem).\(language).html", found)
                    break
                }
            }
        }
        if representation == nil { representation = try await tree.representation(of: path) }
        guard let representation else { throw APIError.notFound }
        var headers: HTTPFields = [
            .contentType: LandingPageResponse.contentType(of: chosen),
            .cacheControl: "no-cache",
            .eTag: representation.etag,
            .contentSecurityPolicy: LandingPageList.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
        ]
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.init("X-Robots-Tag")!] = "noindex, nofollow"
        if isDefaultPage { headers[.vary] = "Accept-Language" }
        if ConditionalRequest.isNotModified(
            ifNoneMatch: request.headers[values: .ifNoneMatch], ifModifiedSince: nil,
            etag: representation.etag, lastModified: nil)
        {
            return Self.notModified(headers)
        }
        headers[.contentLength] = String(representation.bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: representation.bytes))
    }
}
