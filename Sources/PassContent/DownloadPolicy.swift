import PassModel

/// Whether a pass also gets a public download URL, or only its unguessable
/// capability URL, `download/<capability>.pkpass`.
package enum DownloadPolicy: String, Sendable, Hashable {
    /// Only the unguessable capability URL.
    case `private`
    /// Also `download/<passTypeIdentifier>/<serialNumber>.pkpass`, for coupons meant for everyone.
    case `public`
}

func parseDownload(_ node: SourceNode, problems: inout [ContentDiagnostic]) -> DownloadPolicy? {
    guard let text = node.stringValue, let policy = DownloadPolicy(rawValue: text) else {
        problems.append(
            .error(
                at: node.location, keyPath: ["download"], rule: "content.download",
                "download must be `public` or `private`"))
        return nil
    }
    return policy
}
