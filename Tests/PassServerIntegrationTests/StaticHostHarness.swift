import Foundation
import TestSupport

/// A static web server from Debian's packages running one of the
/// repository's deploy files exactly as shipped — `deploy/nginx-passforge.conf`
/// or `deploy/Caddyfile` — on a free loopback port, in front of a built tree
/// and a `passforge serve` upstream (which may be stopped, or never started).
/// Every file the server writes stays in a temporary folder.
// `@unchecked`: Foundation's `Process` is not Sendable; one test owns it.
final class StaticHost: @unchecked Sendable {
    enum Server: String, CustomStringConvertible {
        case nginx, caddy
        var description: String { rawValue }
    }

    let server: Server
    let folder: TemporaryDirectory
    let process = Process()
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init(_ server: Server, root: String, upstreamPort: Int) throws {
        self.server = server
        folder = TemporaryDirectory("passforge-\(server)")
        port = try freeLoopbackPort()
        switch server {
        case .nginx: try configureNginx(root: root, upstreamPort: upstreamPort)
        case .caddy: try configureCaddy(root: root, upstreamPort: upstreamPort)
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: folder.write("stderr.log", "")) ?? FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !canConnect(port: port) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw HarnessError("\(server) did not start: \(log)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// What the server wrote to stderr (and nginx to its error log).
    var log: String {
        ["stderr.log", "error.log"].compactMap { folder.read($0) }.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }

    /// SIGTERM, then SIGKILL if it is still running after 5 s.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped server block, with the three values marked EDIT replaced,
    /// included from a minimal nginx.conf.
    private func configureNginx(root: String, upstreamPort: Int) throws {
        let executable = try Self.executable("nginx", in: ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"])
        let template = (try? String(contentsOf: Self.repository.appendingPathComponent("deploy/nginx-passforge.conf"), encoding: .utf8)) ?? ""
        guard template.contains("/srv/passforge/output"), template.contains("127.0.0.1:8080"), template.contains("listen 8443;") else {
            throw HarnessError("deploy/nginx-passforge.conf no longer has the values this test replaces")
        }
        let server = template
            .replacingOccurrences(of: "/srv/passforge/output", with: root)
            .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(upstreamPort)")
            .replacingOccurrences(of: "listen 8443;", with: "listen 127.0.0.1:\(port);")
        let d = folder.path
        folder.write("passforge.conf", server)
        folder.write("nginx.conf", """
            \(getuid() == 0 ? "user root root;" : "")
            worker_processes 1;
            daemon off;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log warn;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(d)/client_body;
                proxy_temp_path \(d)/proxy;
                fastcgi_temp_path \(d)/fastcgi;
                uwsgi_temp_path \(d)/uwsgi;
                scgi_temp_path \(d)/scgi;
                include \(d)/passforge.conf;
            }
            """)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", d, "-c", "\(d)/nginx.conf"]
    }

    /// The shipped Caddyfile itself, as the README runs it; the values marked
    /// EDIT come from the environment variables it reads. No admin endpoint,
    /// plain HTTP, and Caddy's data and config folders in the temporary one.
    private func configureCaddy(root: String, upstreamPort: Int) throws {
        let executable = try Self.executable("caddy", in: ["/usr/bin/caddy", "/usr/local/bin/caddy"])
        let caddyfile = Self.repository.appendingPathComponent("deploy/Caddyfile").path
        let template = (try? String(contentsOfFile: caddyfile, encoding: .utf8)) ?? ""
        let variables = ["PASSFORGE_SITE", "PASSFORGE_ROOT", "PASSFORGE_UPSTREAM", "PASSFORGE_CADDY_ADMIN"]
        guard variables.allSatisfy({ template.contains("{$\($0):") }) else {
            throw HarnessError("deploy/Caddyfile no longer reads \(variables.joined(separator: ", ")), which this test sets")
        }
        var environment = ProcessInfo.processInfo.environment.filter { $0.key == "PATH" }
        for name in ["HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"] { environment[name] = folder.path }
        environment["PASSFORGE_SITE"] = "http://:\(port)"
        environment["PASSFORGE_ROOT"] = root
        environment["PASSFORGE_UPSTREAM"] = "127.0.0.1:\(upstreamPort)"
        environment["PASSFORGE_CADDY_ADMIN"] = "off"
        process.environment = environment
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["run", "--config", caddyfile, "--adapter", "caddyfile"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder.path)
    }

    private static func executable(_ name: String, in candidates: [String]) throws -> String {
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("\(name) is not installed; `make test` installs it (apt-get install \(name))")
        }
        return path
    }
}

/// A loopback port nobody listens on right now.
func freeLoopbackPort() throws -> Int { try Loopback.freePort() }

func canConnect(port: Int) -> Bool { Loopback.canConnect(port: port) }
