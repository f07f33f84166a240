/// What a program passforge starts may see of passforge's environment: all of
/// it but the secrets, decided here and nowhere else.
///
/// passforge's own settings (`PASSFORGE_*`: the token secret, the signing
/// password, the database URL with its password, the DeviceCheck and APNs
/// keys) are read by passforge itself; no child needs them (even
/// PASSFORGE_SSH_COMMAND reaches ssh and rsync as arguments). Other
/// credentials a CI runner or a host sets (AWS_SECRET_ACCESS_KEY,
/// AWS_SESSION_TOKEN, GITHUB_TOKEN, PGPASSWORD, DATABASE_URL, …) are no
/// business of git, tar, rsync or ssh either. What they do need stays: PATH,
/// HOME, USER, LANG and LC_*, SSH_AUTH_SOCK (an ssh agent), GIT_* settings,
/// TMPDIR, proxies.
///
/// A deny-list rather than an allow-list: an allow-list would drop what a
/// user's ssh or git relies on (an agent socket, a Kerberos cache, a proxy)
/// in ways passforge cannot foresee, while the secrets follow a few shapes.
package enum ChildEnvironment {
    /// Names whose `_`-separated words include one of these are secrets
    /// (`AWS_SESSION_TOKEN`, `RSYNC_PASSWORD`, `CLIENT_SECRET`, …).
    static let secretWords: Set<Substring> = ["SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "TOKEN", "CREDENTIALS"]
    /// Secrets whose names have none of the words above.
    static let secretNames: Set<String> = ["PGPASSWORD", "DATABASE_URL", "MYSQL_PWD"]

    /// True when a child never gets the variable `name` (compared without regard to case).
    package static func isSecret(_ name: String) -> Bool {
        let upper = name.uppercased()
        if upper.hasPrefix("PASSFORGE_") || secretNames.contains(upper) { return true }
        // A key's path or body: SSH_PRIVATE_KEY, DEPLOY_KEY, AWS_SECRET_ACCESS_KEY.
        if upper.hasSuffix("_KEY") { return true }
        return upper.split(separator: "_").contains { secretWords.contains($0) }
    }

    /// `environment` without its secrets: what every child of passforge gets.
    package static func filtered(_ environment: [String: String]) -> [String: String] {
        environment.filter { !isSecret($0.key) }
    }
}
