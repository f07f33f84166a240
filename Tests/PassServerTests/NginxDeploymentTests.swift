import Foundation
import PassBuild
import TestSupport
import Testing

/// The README's static-host deployment, for real: nginx with
/// `deploy/nginx-passforge.conf` serves the built tree, and only
/// registrations, the log and the token check reach `passforge serve`.
@Suite(.serialized) struct NginxDeploymentTests {
    @Test func nginxServesTheTreeAndRoutesOnlyChangesToPassforge() async throws {
        let built = try BuiltProject(passCount: 2)
        let server = try ServerProcess(built)
        let nginx = try NginxProcess(root: built.output, upstreamPort: server.port)
        let client = Client(base: nginx.base)
        let type = built.type
        let device = "1a2b3c4d5e6f7a8b9c0d"
        let token0 = try built.token("C-0000")
        let record0 = try built.record("C-0000")

        // Pass: the bytes from disk, after passforge said the token is right.
        let pass = try await client.pass(type, "C-0000", token: token0)
        #expect(pass.status == 200)
        #expect(pass.body == built.fileBytes(record0.path))
        #expect(pass.header("Content-Type") == "application/vnd.apple.pkpass")
        let etag = try #require(pass.header("ETag"))
        let lastModified = try #require(pass.header("Last-Modified"))
        #expect(try await client.pass(type, "C-0000", token: token0, headers: ["If-None-Match": etag]).status == 304)
        #expect(try await client.pass(type, "C-0000", token: token0, headers: ["If-Modified-Since": lastModified]).status == 304)

        // No, a wrong or another pass's token, or an unknown pass: the same 401, no bytes.
        let token1 = try built.token("C-0001")
        for (serial, token) in [("C-0000", nil), ("C-0000", "not-the-token-at-all"), ("C-0000", token1), ("C-9999", token0)] as [(String, String?)] {
            let answer = try await client.pass(type, serial, token: token)
            #expect(answer.status == 401, "\(serial) \(token ?? "no token")")
            #expect(answer.body.firstRange(of: Array("PK".utf8)) == nil)
        }

        // Registering goes through to passforge; the list is the index file it wrote.
        #expect(try await client.serials(device, type).status == 204)
        #expect(try await client.register(device, type, "C-0000", token: token0, pushToken: ServeEndToEndTests.pushA).status == 201)
        let list = try await client.serials(device, type)
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.json?["serialNumbers"] as? [String] == ["C-0000"])
        #expect(list.json?["lastUpdated"] as? String == String(record0.updateTag))
        #expect(try await client.unregister(device, type, "C-0000", token: token0).status == 200)
        #expect(try await client.serials(device, type).status == 204)

        // Log and health reach passforge.
        let log = try await client.send(.POST, "/v1/log", headers: ["Content-Type": "application/json"], body: Array(#"{"logs":["via nginx"]}"#.utf8))
        #expect(log.status == 200)
        #expect(try await client.send(.GET, "/health").status == 200)

        // Add-to-Wallet link: no token needed.
        let download = try await client.send(.GET, "/" + record0.downloadPath)
        #expect(download.status == 200)
        #expect(download.body == pass.body)

        // Never served: the build state, other files, other methods.
        #expect(try await client.send(.GET, "/.passforge/state.json").status == 404)
        #expect(try await client.send(.GET, "/.passforge/downloads.csv").status == 404)
        #expect(try await client.send(.DELETE, "/v1/passes/\(type)/C-0000", headers: ["Authorization": "ApplePass \(token0)"]).status >= 400)
        for path in ["/v1/passes/\(type)/..%2f..%2f.passforge%2fstate.json", "/v1/devices/../.passforge/state.json", "/download/..%2f.passforge/state.json"] {
            let answer = try RawHTTP.send(port: nginx.port, "GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: ApplePass \(token0)\r\nConnection: close\r\n\r\n")
            #expect(answer.status >= 400, "\(path)")
            #expect(!answer.response.contains("lastUpdateTag"), "\(path)")
        }

        nginx.stop()
        server.stop()
        #expect(try built.sql("SELECT COUNT(*) FROM device_logs") == "1")
    }
}

/// nginx from Debian's package, running the repository's example server
/// block on free ports, with every file it writes in a temporary folder.
// `@unchecked`: Foundation's `Process` is not Sendable; one test owns it.
final class NginxProcess: @unchecked Sendable {
    let folder = TemporaryDirectory("passforge-nginx")
    let process = Process()
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    static var configurationTemplate: String {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: repository.appendingPathComponent("deploy/nginx-passforge.conf"), encoding: .utf8)) ?? ""
    }

    init(root: String, upstreamPort: Int) throws {
        guard let executable = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("nginx is not installed; `make test` installs it (apt-get install nginx)")
        }
        let template = Self.configurationTemplate
        guard template.contains("/srv/passforge/output"), template.contains("127.0.0.1:8080"), template.contains("listen 8443;") else {
            throw HarnessError("deploy/nginx-passforge.conf no longer has the values this test replaces")
        }
        port = try freeLoopbackPort()
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
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: folder.write("stderr.log", "")) ?? FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !canConnect(port: port) {
            guard process.isRunning, Date() < deadline else {
                throw HarnessError("nginx did not start: \(String(decoding: folder.read("stderr.log") ?? [], as: UTF8.self)) \(String(decoding: folder.read("error.log") ?? [], as: UTF8.self))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A loopback port nobody listens on right now.
func freeLoopbackPort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw HarnessError("socket: \(errno)") }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
    }
    guard bound else { throw HarnessError("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(port: Int) -> Bool {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return false }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
