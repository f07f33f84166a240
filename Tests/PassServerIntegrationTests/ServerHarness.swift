import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PassBuild
import PassModel
import TestSupport
import Testing
import WalletTree

/// A real project, built by the real `passforge build`, with the tokens of
/// its passes read back from the signed files.
// `@unchecked`: one test owns it; `environment` is set before any process starts.
final class BuiltProject: @unchecked Sendable {
    let project: ProjectFixture
    var environment: [String: String]
    /// Where the registrations live: outside the project, so that it survives anything.
    let state = TemporaryDirectory("passforge-serve-state")
    var databasePath: String { state.file("registrations.sqlite") }

    /// `orders`: order identifiers built too, from the `shop` order template (`ProjectFixture.addOrderTemplate`).
    /// For synchronous tests: the build holds the calling thread. Async tests call `make`.
    convenience init(passCount: Int = 3, orders: [String] = []) throws {
        self.init(unbuilt: passCount, orders: orders)
        try build()
    }

    /// The project, built without holding any of the test runner's threads.
    static func make(passCount: Int = 3, orders: [String] = []) async throws -> BuiltProject {
        let built = BuiltProject(unbuilt: passCount, orders: orders)
        try await built.build()
        return built
    }

    private init(unbuilt passCount: Int, orders: [String]) {
        project = ProjectFixture(passCount: passCount)
        if !orders.isEmpty {
            project.addOrderTemplate()
            for order in orders { project.writeOrder(order) }
        }
        var environment = TestPKI.shared.environment(TestPKI.shared.leaf())
        // The build refreshes the indices of the devices in the server's store.
        environment["PASSFORGE_DATABASE_URL"] = state.file("registrations.sqlite")
        self.environment = environment
    }

    var output: String { project.output }
    var type: String { TestPKI.passType }

    func build() throws {
        let result = try project.passforge(["build", "--quiet"], environment: environment)
        guard result.status == 0 else { throw HarnessError("passforge build failed: \(result.output)") }
    }

    /// `build` for async tests: suspends until the build ends, holding none of the test runner's threads.
    func build() async throws {
        let result = try await project.passforge(["build", "--quiet"], environment: environment)
        guard result.status == 0 else { throw HarnessError("passforge build failed: \(result.output)") }
    }

    func buildState() throws -> BuildState { try BuildState.load(from: output) }

    func record(_ serial: String) throws -> BuildState.ItemRecord {
        guard let record = try buildState().passes["\(type)/\(serial)"] else { throw HarnessError("no pass \(serial)") }
        return record
    }

    func fileBytes(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: "\(output)/\(relative)").map { Array($0) }
    }

    /// The pass's authenticationToken, read from pass.json inside the signed file.
    func token(_ serial: String) async throws -> String {
        try await authenticationToken(ofItemAt: "\(output)/v1/passes/\(type)/\(serial)", "pass \(serial)")
    }

    var orderType: String { TestPKI.orderType }

    func orderRecord(_ identifier: String) throws -> BuildState.ItemRecord {
        guard let record = try buildState().passes["\(orderType)/\(identifier)"], record.kind == .order else {
            throw HarnessError("no order \(identifier)")
        }
        return record
    }

    /// The order's authenticationToken, read from order.json inside the signed file.
    func orderToken(_ identifier: String) async throws -> String {
        try await authenticationToken(ofItemAt: "\(output)/v1/orders/\(orderType)/\(identifier)", "order \(identifier)")
    }

    /// Rows of the registration database, read by the sqlite3 command (or
    /// psql, when PASSFORGE_DATABASE_URL names a PostgreSQL database).
    func sql(_ query: String) throws -> String {
        if let url = environment["PASSFORGE_DATABASE_URL"], url.hasPrefix("postgres") {
            return try PostgresServeTests.value(url, query)
        }
        let result = try runProcess("sqlite3", [databasePath, query])
        guard result.status == 0 else { throw HarnessError("sqlite3 failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `sql` for async tests: suspends until the command ends, holding none of the test runner's threads.
    func sql(_ query: String) async throws -> String {
        if let url = environment["PASSFORGE_DATABASE_URL"], url.hasPrefix("postgres") {
            return try await PostgresServeTests.value(url, query)
        }
        let result = try await runProcessWithoutBlocking("sqlite3", [databasePath, query])
        guard result.status == 0 else { throw HarnessError("sqlite3 failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// `passforge serve` as a real process on a free loopback port. Starting and stopping it are awaited events
/// (its "listening on" line, its exit): no test runner's thread waits on it.
final class ServerProcess: Sendable {
    /// What it wrote so far, on one of its outputs.
    struct Output: Sendable {
        let read: @Sendable () -> String
        func get() -> String { read() }
    }

    let process: BackgroundProcess
    let port: Int
    var stdout: Output { Output { [process] in process.stdout } }
    var stderr: Output { Output { [process] in process.stderr } }
    var base: String { "http://127.0.0.1:\(port)" }

    /// `openFiles`: the soft and hard open-file limits to start it with (through prlimit(1)), as systemd's 1024.
    init(_ built: BuiltProject, arguments: [String] = [], openFiles: (soft: Int, hard: Int)? = nil) async throws {
        var executable = passforgeExecutable()
        var allArguments = ["serve", "--port", "0"] + arguments
        if let openFiles {
            allArguments = ["--nofile=\(openFiles.soft):\(openFiles.hard)", executable] + allArguments
            executable = "/usr/bin/prlimit"
        }
        var environment = ProcessInfo.processInfo.environment
        environment["CI"] = nil
        for (key, value) in built.environment { environment[key] = value }
        environment["LOG_LEVEL"] = "info"
        process = try BackgroundProcess(
            executable, allArguments, directory: built.project.root, environment: environment)
        port = try await process.value("its port") { stdout, _ in Self.port(in: stdout) }
    }

    /// The port of the banner "listening on http://127.0.0.1:PORT/…", once the line is whole.
    private static func port(in text: String) -> Int? {
        guard let range = text.range(of: "listening on http://127.0.0.1:") else { return nil }
        let rest = text[range.upperBound...]
        let digits = rest.prefix { $0.isNumber }
        guard let next = rest.dropFirst(digits.count).first, next == "/" || next == "\n" else { return nil }
        return Int(digits)
    }

    /// SIGTERM, then waits: the graceful way.
    @discardableResult
    func stop() async -> Int32 {
        process.signal(SIGTERM)
        return await process.exit(timeout: .seconds(3600)) ?? SIGTERM
    }

    /// SIGTERM without waiting, for a `defer` (which cannot await): the end of a test that checks no more.
    func terminate() {
        process.signal(SIGTERM)
    }

    /// SIGKILL: no chance to flush anything.
    func kill() async {
        await process.kill()
    }
}

/// The real HTTP client: AsyncHTTPClient over loopback.
struct Client {
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    }

    let base: String
    var timeout: TimeAmount = .seconds(30)

    func send(_ method: HTTPMethod = .GET, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil)
        async throws -> Answer
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: 16 << 20)
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Array(collected.readableBytesView))
    }

    func register(_ device: String, _ type: String, _ serial: String, token: String, pushToken: String) async throws
        -> Answer
    {
        try await send(
            .POST, "/v1/devices/\(device)/registrations/\(type)/\(serial)",
            headers: ["Authorization": "ApplePass \(token)", "Content-Type": "application/json"],
            body: Array(#"{"pushToken":"\#(pushToken)"}"#.utf8))
    }

    func unregister(_ device: String, _ type: String, _ serial: String, token: String) async throws -> Answer {
        try await send(
            .DELETE, "/v1/devices/\(device)/registrations/\(type)/\(serial)",
            headers: ["Authorization": "ApplePass \(token)"])
    }

    func serials(_ device: String, _ type: String, since: String? = nil) async throws -> Answer {
        try await send(
            .GET, "/v1/devices/\(device)/registrations/\(type)" + (since.map { "?passesUpdatedSince=\($0)" } ?? ""))
    }

    func pass(_ type: String, _ serial: String, token: String?, headers: [String: String] = [:]) async throws -> Answer
    {
        var headers = headers
        if let token { headers["Authorization"] = "ApplePass \(token)" }
        return try await send(.GET, "/v1/passes/\(type)/\(serial)", headers: headers)
    }
}

/// Exact bytes on a socket, for requests an HTTP client would "fix" (`..`, `%2F`).
enum RawHTTP {
    static func send(port: Int, _ request: String) throws -> (status: Int, response: String) {
        let fd = try Loopback.connectedSocket(port: port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, text)
    }
}

/// The authenticationToken of the signed pass or order at `path`, read from its pass.json or order.json
/// once its signature is verified; `item` names it in the error.
func authenticationToken(ofItemAt path: String, _ item: String) async throws -> String {
    let verified = try await PassVerifier.verifyWithoutBlocking(path, root: TestPKI.shared.root)
    guard let token = verified.passJSON["authenticationToken"] as? String else {
        throw HarnessError("\(item) has no token")
    }
    return token
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func hexToken(_ byte: String) -> String { String(repeating: byte, count: 32) }

/// Polls until `condition` holds (a new build is noticed within ~250 ms): for a state that another process changes
/// and announces nowhere the test can await (a row, a file, a mock's requests, an HTTP answer). A line the program
/// prints is an event instead: await it (`server.process.contains`).
/// The condition is checked once more after the deadline: in the whole
/// parallel suite a polling task can be held past its deadline in one sleep.
func eventually(timeout: Double = 10, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

extension HTTPMethodName {
    var nio: HTTPMethod {
        switch self {
        case .GET: return .GET
        case .HEAD: return .HEAD
        case .POST: return .POST
        case .PUT: return .PUT
        case .DELETE: return .DELETE
        }
    }
}
