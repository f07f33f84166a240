/// Where `passforge publish` copies the tree, and where `build --state-from`
/// reads the published state: a local folder, or `[user@]host:/path`
/// reached with rsync over ssh.
package enum PublishDestination: Sendable, Equatable, CustomStringConvertible {
    /// A folder on this machine (a mounted volume counts).
    case directory(String)
    /// `[user@]host` and the folder on that host; a relative folder is under the login's home.
    case remote(userHost: String, path: String)

    /// A destination is remote when it reads `[user@]host:path`: a colon
    /// before any slash, with no slash, `@` or colon in the host part.
    /// Everything else is a local path (`./a:b` is local).
    package init(parsing text: String) {
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/") {
            let userHost = String(text[..<colon])
            let parts = userHost.split(separator: "@", omittingEmptySubsequences: false)
            let host = parts.last.map(String.init) ?? ""
            let userIsValid = parts.count == 1 || (parts.count == 2 && !parts[0].isEmpty)
            if userIsValid, !host.isEmpty {
                self = .remote(userHost: userHost, path: String(text[text.index(after: colon)...]))
                return
            }
        }
        self = .directory(text)
    }

    package var description: String {
        switch self {
        case .directory(let path): path
        case .remote(let userHost, let path): "\(userHost):\(path)"
        }
    }

    /// The transport that reaches this destination. `environment` supplies
    /// `PASSFORGE_SSH_COMMAND` and `PATH` for the remote form.
    package func makeTransport(environment: [String: String]) throws(PublishError) -> any PublishTransport {
        switch self {
        case .directory(let path): DirectoryTransport(root: path)
        case .remote(let userHost, let path): try RsyncTransport(userHost: userHost, path: path, environment: environment)
        }
    }
}
