import Hummingbird
import NIOCore

extension PassWebService {
    /// A `.pkpasses` bundle (several passes in one download): a file the
    /// build put at an unguessable `download/` path, served with Apple's
    /// bundle type and an ETag of its bytes.
    func bundleResponse(_ request: Request, path: String) async throws -> Response {
        guard let representation = try await tree.representation(of: path) else { throw APIError.notFound }
        var headers: HTTPFields = [
            .contentType: "application/vnd.apple.pkpasses",
            .cacheControl: "no-cache",
            .eTag: representation.etag,
        ]
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
