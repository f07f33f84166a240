import Foundation

/// Turns what ssh and rsync print when they fail into one message that says
/// what to do.
enum RemoteFailure {
    static func explain(
        program: String, status: Int32, errorOutput: String, userHost: String, root: String, action: String
    ) -> PublishError {
        let host = userHost.split(separator: "@").last.map(String.init) ?? userHost
        let lines = errorOutput.split(whereSeparator: \.isNewline).map(String.init)
        let detail = lines.suffix(3).joined(separator: " / ")
        func has(_ text: String) -> Bool { errorOutput.localizedCaseInsensitiveContains(text) }

        if has("Permission denied (") || has("Too many authentication failures") {
            return PublishError(
                .remoteFailed,
                "cannot \(action): ssh could not log in to \(userHost) (\(detail)); check the user name and the key, e.g. PASSFORGE_SSH_COMMAND=\"ssh -i /path/to/key\""
            )
        }
        if has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
            return PublishError(
                .remoteFailed,
                "cannot \(action): \(host)'s ssh host key is unknown or has changed; check it, then add it with `ssh-keyscan \(host) >> ~/.ssh/known_hosts`"
            )
        }
        if has("Could not resolve hostname") || has("Connection refused") || has("No route to host")
            || has("Connection timed out") || has("Network is unreachable") || has("Connection closed by")
        {
            return PublishError(
                .remoteFailed,
                "cannot \(action): \(host) is unreachable over ssh (\(detail)); check the host name, the port (PASSFORGE_SSH_COMMAND=\"ssh -p PORT\") and that sshd runs there"
            )
        }
        if has("rsync: command not found") || has("rsync: not found")
            || (program == "rsync" && has("No such file or directory") && has("exec"))
        {
            return PublishError(
                .programMissing,
                "cannot \(action): rsync is not installed on \(host); install it there (apt-get install rsync)")
        }
        if has("Permission denied") || has("Read-only file system") {
            return PublishError(
                .remoteFailed,
                "cannot \(action): permission denied at \(userHost):\(root) (\(detail)); let \(userHost) write to \(root), or publish elsewhere"
            )
        }
        if has("No space left on device") {
            return PublishError(
                .remoteFailed, "cannot \(action): \(userHost):\(root) is full (\(detail)); free some disk space there")
        }
        return PublishError(
            .remoteFailed,
            "cannot \(action): \(program) exited with status \(status)\(detail.isEmpty ? "" : " (\(detail))")")
    }
}
