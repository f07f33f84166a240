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
    private let process = Process()

    /// The ssh command (for PASSFORGE_SSH_COMMAND) that reaches this server
    /// without asking anything.
    public var sshCommand: String {
        "ssh -p \(port) -i \(clientKey) -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
    }

    /// Starts the server; `lifetime` seconds is the most it runs.
    public init(lifetime: Int = 900) throws {
        let sshd = "/usr/sbin/sshd"
        guard FileManager.default.isExecutableFile(atPath: sshd) else {
            throw Failure(description: "sshd is not installed; `make deps` installs it (apt-get install openssh-server rsync)")
        }
        let d = folder.path
        for key in ["host_key", "client_key"] {
            let result = try runProcess("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "passforge-test", "-f", "\(d)/\(key)"])
            guard result.status == 0 else { throw Failure(description: "ssh-keygen failed: \(result.output)") }
        }
        try FileManager.default.copyItem(atPath: "\(d)/client_key.pub", toPath: "\(d)/authorized_keys")
        // sshd refuses to start without its privilege separation folder.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)

        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        userHost = "\(user)@127.0.0.1"
        port = try Loopback.freePort()
        folder.write("sshd_config", """
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
            LogLevel ERROR
            """)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", String(lifetime), sshd, "-D", "-f", "\(d)/sshd_config", "-E", "\(d)/sshd.log"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !Loopback.canConnect(port: port) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw Failure(description: "sshd did not start: \(String(decoding: folder.read("sshd.log") ?? [], as: UTF8.self))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
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
        guard process.isRunning else { return }
        let pidText = String(decoding: folder.read("sshd.pid") ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let pid = Int32(pidText), pid > 1 { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            if let pid = Int32(pidText), pid > 1 { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    deinit { stop() }
}
