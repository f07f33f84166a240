import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway OpenSSH server (Debian's `openssh-server`) for tests that
/// publish over ssh: it listens on a free loopback port, lets the current
/// user in with a key made for it, and keeps every file it uses (host key,
/// authorized key, configuration, pid file, log) in a temporary folder.
///
/// It runs under `timeout`, so even a test process that dies without
/// calling `stop()` leaves no server behind for long.
public final class SSHServer: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let folder = TemporaryDirectory("passforge-sshd")
    public let port: Int
    /// The private key that logs in.
    public var clientKey: String { folder.file("client_key") }
    /// `user@127.0.0.1`, for `user@host:/path` destinations.
    public let userHost: String
    private let process: BackgroundProcess

    /// The ssh command (for PASSFORGE_SSH_COMMAND) that reaches this server
    /// without asking anything.
    public var sshCommand: String {
        "ssh -p \(port) -i \(clientKey) -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
    }

    /// Starts the server and blocks the calling thread (a synchronous test's) until it listens; `lifetime` seconds
    /// is the most it runs. Async tests call `start`.
    public convenience init(lifetime: Int = 900) throws {
        try self.init(starting: lifetime)
        try ready(process.blockingWait(for: Self.listening, timeout: .seconds(10)))
    }

    /// Starts the server and suspends until it listens, holding no thread.
    public static func start(lifetime: Int = 900) async throws -> SSHServer {
        let server = try SSHServer(starting: lifetime)
        try server.ready(await server.process.contains(Self.listening, timeout: .seconds(10)))
        return server
    }

    /// What sshd logs (at INFO, on stderr with `-e`) once its socket listens.
    private static let listening = "Server listening on"

    private func ready(_ listens: Bool) throws {
        guard listens else {
            stop()
            throw Failure(description: "sshd did not start: \(process.output)")
        }
    }

    private init(starting lifetime: Int) throws {
        let sshd = "/usr/sbin/sshd"
        guard FileManager.default.isExecutableFile(atPath: sshd) else {
            throw Failure(
                description: "sshd is not installed; `make deps` installs it (apt-get install openssh-server rsync)")
        }
        let d = folder.path
        for key in ["host_key", "client_key"] {
            let result = try runProcess(
                "ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "passforge-test", "-f", "\(d)/\(key)"])
            guard result.status == 0 else { throw Failure(description: "ssh-keygen failed: \(result.output)") }
        }
        try FileManager.default.copyItem(atPath: "\(d)/client_key.pub", toPath: "\(d)/authorized_keys")
        // sshd refuses to start without its privilege separation folder.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)

        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        userHost = "\(user)@127.0.0.1"
        port = try Loopback.freePort()
        folder.write(
            "sshd_config",
            """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(d)/host_key
            PidFile \(d)/sshd.pid
            AuthorizedKeysFile \(d)/authorized_keys
            AllowUsers \(user)
            PermitRootLogin prohibit-password
            PubkeyAuthentication yes
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            StrictModes no
            UsePAM no
            PrintMotd no
            LogLevel INFO
            """)
        process = try BackgroundProcess(
            "/usr/bin/timeout", ["--kill-after=5", String(lifetime), sshd, "-D", "-e", "-f", "\(d)/sshd_config"])
    }

    /// Runs a command on the server as the test user (to look at or change the published tree).
    @discardableResult
    public func run(_ command: String) throws -> ProcessResult {
        try runProcess("ssh", sshCommand.split(separator: " ").dropFirst().map(String.init) + [userHost, command])
    }

    /// Stops sshd through its pid file: `timeout` may have inherited a
    /// signal mask that blocks SIGTERM from the test thread that started it,
    /// so terminating it would not reach sshd.
    public func stop() {
        terminate()
        if process.blockingWaitForExit(timeout: .seconds(5)) == nil {
            if let pid = pid { kill(pid, SIGKILL) }
            process.signal(SIGKILL)
            process.blockingWaitForExit(timeout: .seconds(60))
        }
    }

    /// SIGTERM to sshd without waiting for it to end (for async tests, which must not block).
    public func terminate() {
        if process.isRunning, let pid { kill(pid, SIGTERM) }
    }

    private var pid: Int32? {
        let text = String(decoding: folder.read("sshd.pid") ?? [], as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        return Int32(text).flatMap { $0 > 1 ? $0 : nil }
    }

    deinit { terminate() }
}
