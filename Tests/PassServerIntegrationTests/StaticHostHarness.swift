import Foundation
import TestSupport

/// A static web server from Debian's packages running one of the
/// repository's deploy files exactly as shipped — `deploy/nginx-passforge.conf`
/// or `deploy/Caddyfile` — on a free loopback port, in front of a built tree
/// and a `passforge serve` upstream (which may be stopped, or never started).
/// Every file the server writes stays in a temporary folder.
/// Its start is an awaited event: the line each server writes once it listens (nginx's "start worker
/// processes", Caddy's "serving initial configuration").
final class StaticHost: Sendable {
    enum Server: String, CustomStringConvertible {
        case nginx, caddy
        var description: String { rawValue }
    }

    /// How the server is started.
    private struct Launch {
        var executable: String
        var arguments: [String]
        var environment: [String: String]? = nil
        var directory: String? = nil
    }

    let server: Server
    let folder: TemporaryDirectory
    let process: BackgroundProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// `deviceLists`: the configs' setting for the devices' lists, `files` or `store`, as `serve --device-lists`.
    init(_ server: Server, root: String, upstreamPort: Int, deviceLists: String = "files") async throws {
        self.server = server
        let folder = TemporaryDirectory("passforge-\(server)")
        self.folder = folder
        let port = try freeLoopbackPort()
        self.port = port
        let launch =
            switch server {
            case .nginx:
                try Self.configureNginx(
                    folder, port: port, root: root, upstreamPort: upstreamPort, deviceLists: deviceLists)
            case .caddy:
                try Self.configureCaddy(
                    folder, port: port, root: root, upstreamPort: upstreamPort, deviceLists: deviceLists)
            }
        process = try BackgroundProcess(
            launch.executable, launch.arguments, directory: launch.directory,
            environment: launch.environment)
        let ready = server == .nginx ? "start worker processes" : "serving initial configuration"
        guard await process.contains(ready, timeout: .seconds(10)) else {
            await process.kill()
            throw HarnessError("\(server) did not start: \(log)")
        }
    }

    /// What the server wrote to stderr (and nginx to its error log).
    var log: String {
        ([process.stderr] + [folder.read("error.log")].compactMap { $0 }.map { String(decoding: $0, as: UTF8.self) })
            .joined(separator: "\n")
    }

    /// SIGTERM, then SIGKILL if it is still running after 5 s; returns once it has ended.
    func stop() async {
        await process.stop(grace: .seconds(5))
    }

    /// SIGTERM without waiting, for a `defer` (which cannot await).
    func terminate() { process.signal(SIGTERM) }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The shipped server block, with the three values marked EDIT replaced,
    /// included from a minimal nginx.conf.
    private static func configureNginx(
        _ folder: TemporaryDirectory, port: Int, root: String, upstreamPort: Int, deviceLists: String
    ) throws -> Launch {
        let executable = try Self.executable(
            "nginx", in: ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"])
        let template =
            (try? String(
                contentsOf: Self.repository.appendingPathComponent("deploy/nginx-passforge.conf"), encoding: .utf8))
            ?? ""
        let listsLine = "set $passforge_device_lists files;"
        guard template.contains("/srv/passforge/output"), template.contains("127.0.0.1:8080"),
            template.contains("listen 8443;"),
            template.contains(listsLine)
        else {
            throw HarnessError("deploy/nginx-passforge.conf no longer has the values this test replaces")
        }
        let server =
            template
            .replacingOccurrences(of: "/srv/passforge/output", with: root)
            .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(upstreamPort)")
            .replacingOccurrences(of: "listen 8443;", with: "listen 127.0.0.1:\(port);")
            .replacingOccurrences(of: listsLine, with: "set $passforge_device_lists \(deviceLists);")
        let d = folder.path
        folder.write("passforge.conf", server)
        folder.write(
            "nginx.conf",
            """
            \(getuid() == 0 ? "user root root;" : "")
            worker_processes 1;
            daemon off;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log warn;
            error_log stderr notice;
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
        return Launch(executable: executable, arguments: ["-p", d, "-c", "\(d)/nginx.conf"])
    }

    /// The shipped Caddyfile itself, as the README runs it; the values marked
    /// EDIT come from the environment variables it reads. No admin endpoint,
    /// plain HTTP, and Caddy's data and config folders in the temporary one.
    private static func configureCaddy(
        _ folder: TemporaryDirectory, port: Int, root: String, upstreamPort: Int, deviceLists: String
    ) throws -> Launch {
        let executable = try Self.executable("caddy", in: ["/usr/bin/caddy", "/usr/local/bin/caddy"])
        let caddyfile = Self.repository.appendingPathComponent("deploy/Caddyfile").path
        let template = (try? String(contentsOfFile: caddyfile, encoding: .utf8)) ?? ""
        let variables = [
            "PASSFORGE_SITE", "PASSFORGE_ROOT", "PASSFORGE_UPSTREAM", "PASSFORGE_CADDY_ADMIN", "PASSFORGE_DEVICE_LISTS",
        ]
        guard variables.allSatisfy({ template.contains("{$\($0):") }) else {
            throw HarnessError(
                "deploy/Caddyfile no longer reads \(variables.joined(separator: ", ")), which this test sets")
        }
        var environment = ProcessInfo.processInfo.environment.filter { $0.key == "PATH" }
        for name in ["HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"] { environment[name] = folder.path }
        environment["PASSFORGE_SITE"] = "http://:\(port)"
        environment["PASSFORGE_ROOT"] = root
        environment["PASSFORGE_UPSTREAM"] = "127.0.0.1:\(upstreamPort)"
        environment["PASSFORGE_CADDY_ADMIN"] = "off"
        environment["PASSFORGE_DEVICE_LISTS"] = deviceLists
        return Launch(
            executable: executable, arguments: ["run", "--config", caddyfile, "--adapter", "caddyfile"],
            environment: environment, directory: folder.path)
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
