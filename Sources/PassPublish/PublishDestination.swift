package import ConcurrencySupport
import WalletTree

/// Where `passforge publish` copies the tree, and where `build --state-from`
/// reads the published state: a local folder, `[user@]host:/path` reached
/// with rsync over ssh, or `s3://BUCKET/PREFIX` on an S3-compatible store.
package enum PublishDestination: Sendable, Equatable, CustomStringConvertible {
    /// A folder on this machine (a mounted volume counts).
    case directory(String)
    /// `[user@]host` and the folder on that host; a relative folder is under the login's home.
    case remote(userHost: String, path: String)
    /// A bucket and the key prefix the tree goes under ("" for the bucket's root; no slash at either end).
    case objectStorage(bucket: String, prefix: String)

    /// The forms a DEST may take, for messages.
    package static let acceptedForms =
        "a folder (/srv/site, ./site), [user@]host:/path (rsync over ssh), or s3://BUCKET/PREFIX"

    /// Reads DEST strictly, and refuses what is none of the three forms
    /// rather than guessing: a text that only looks like a folder
    /// (`user@host@evil:/x`) must not be written to as one, nor count as a
    /// first deploy under CI.
    ///
    /// - `s3://BUCKET[/PREFIX]`: see `objectStorage(parsing:)`.
    /// - Any other `scheme://` is refused.
    /// - A colon before any slash makes it remote: the part before must be a
    ///   clean `[user@]host` (user `[A-Za-z0-9._-]`, host a name or an
    ///   address of `[A-Za-z0-9.-]`, or `[IPv6]`), neither starting with `-`.
    /// - Everything else is a folder (`./a:b` is one), with no control character.
    package init(parsing text: String) throws(PublishError) {
        func refuse(_ why: String) -> PublishError {
            PublishError(
                .invalidDestination,
                "\(BuildState.quoted(text)) is not a destination passforge accepts: \(why). "
                    + "DEST is \(Self.acceptedForms)"
            )
        }
        guard !text.isEmpty else { throw refuse("it is empty") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw refuse("it holds a control character")
        }
        if text.hasPrefix("s3://") {
            self = try Self.objectStorage(parsing: text, refuse: refuse)
            return
        }
        if let scheme = text.firstRange(of: "://"), !text[..<scheme.lowerBound].contains("/") {
            throw refuse("\(text[..<scheme.lowerBound])://… is not a scheme passforge publishes to")
        }
        // `[IPv6]:path`: the colon after the bracket.
        let hostEnd = text.hasPrefix("[") ? text.firstRange(of: "]:").map { text.index(after: $0.lowerBound) } : nil
        guard let colon = hostEnd ?? text.firstIndex(of: ":"), !text[..<colon].contains("/") else {
            self = .directory(text)
            return
        }
        let userHost = String(text[..<colon])
        guard Self.isCleanUserHost(userHost) else {
            throw refuse(
                "\(BuildState.quoted(userHost)) before the colon is not a clean [user@]host "
                    + "(write ./\(text) for a folder of that name)"
            )
        }
        self = .remote(userHost: userHost, path: String(text[text.index(after: colon)...]))
    }

    /// `[user@]host`: one optional user of `[A-Za-z0-9._-]`, a host name or
    /// IPv4 address of `[A-Za-z0-9.-]`, or a bracketed IPv6 address; neither starts with `-` (an ssh option).
    static func isCleanUserHost(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.last else { return false }
        let nameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
        if parts.count == 2 {
            let user = parts[0]
            guard !user.isEmpty, !user.hasPrefix("-"), user.allSatisfy({ nameCharacters.contains($0) || $0 == "_" })
            else { return false }
        }
        if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 {
            return host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return !host.isEmpty && !host.hasPrefix("-") && !host.hasPrefix(".") && host.allSatisfy(nameCharacters.contains)
    }

    /// `s3://BUCKET[/PREFIX][/]`. BUCKET: 3 to 63 of `[a-z0-9.-]` (and `_`,
    /// which some stores allow), starting and ending with a letter or digit.
    /// PREFIX: segments of `[A-Za-z0-9._~=+,@-]`, none empty, `.` or `..`:
    /// a key is signed exactly as it is sent (S3 does not normalize paths), so
    /// only names that read the same everywhere are taken.
    private static func objectStorage(
        parsing text: String, refuse: (String) -> PublishError
    ) throws(PublishError) -> Self {
        var rest = text.dropFirst("s3://".count)
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let bucket = rest.prefix { $0 != "/" }
        let prefix = rest.dropFirst(bucket.count + 1)
        let bucketCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789.-_")
        guard (3...63).contains(bucket.count), bucket.allSatisfy(bucketCharacters.contains),
            bucket.first!.isLetter || bucket.first!.isNumber, bucket.last!.isLetter || bucket.last!.isNumber
        else {
            throw refuse("the bucket name must be 3 to 63 lower-case letters, digits, dots and hyphens")
        }
        let keyCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~=+,@-")
        for segment in prefix.split(separator: "/", omittingEmptySubsequences: false) where !prefix.isEmpty {
            guard !segment.isEmpty, segment != ".", segment != "..", segment.allSatisfy(keyCharacters.contains) else {
                throw refuse(
                    "the prefix's parts must be non-empty, not . or .., and of letters, digits and . _ ~ = + , @ -")
            }
        }
        return .objectStorage(bucket: String(bucket), prefix: String(prefix))
    }

    package var description: String {
        switch self {
        case .directory(let path): path
        case .remote(let userHost, let path): "\(userHost):\(path)"
        case .objectStorage(let bucket, let prefix): prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)"
        }
    }

    /// The transport that reaches this destination. `environment` supplies
    /// `PASSFORGE_SSH_COMMAND` and `PATH` for the remote form, and the `AWS_*`
    /// credentials and endpoint for object storage. The object storage client's work runs on `pool`.
    package func makeTransport(
        environment: [String: String], pool: BlockingPool, checkpoints: any Checkpoints = NoCheckpoints()
    ) throws(PublishError) -> any PublishTransport {
        switch self {
        case .directory(let path): DirectoryTransport(root: path)
        case .remote(let userHost, let path):
            try RsyncTransport(userHost: userHost, path: path, environment: environment)
        case .objectStorage(let bucket, let prefix):
            try ObjectStorageTransport(
                bucket: bucket, prefix: prefix, environment: environment, pool: pool, checkpoints: checkpoints)
        }
    }
}
