import Foundation
import MockAPNs
import PassBuild
import TestSupport
import Testing
import WalletTree

/// The content repository of a static deployment: a bare git repository as
/// the origin, and an editor's working copy (a `ProjectFixture`) that
/// commits `passforge.yml`, `templates/` and `content/` to it.
final class ContentRepository: Sendable {
    let origin = TemporaryDirectory("passforge-origin")
    /// The editor's working copy.
    let editor: ProjectFixture

    /// `orders`: order identifiers of the `shop` order template, committed with the passes.
    init(passCount: Int, orders: [String] = []) async throws {
        editor = ProjectFixture(passCount: passCount)
        if !orders.isEmpty {
            editor.addOrderTemplate()
            for order in orders { editor.writeOrder(order) }
        }
        try await Self.git(["init", "-q", "--bare", "-b", "main", origin.path], in: origin.path)
        try await Self.git(["init", "-q", "-b", "main"], in: editor.root)
        editor.directory.write(".gitignore", "output/\nstate/\n")
        try await Self.git(["remote", "add", "origin", origin.path], in: editor.root)
        try await commit("A small project")
    }

    /// Commits everything in the working copy and pushes it to the origin.
    func commit(_ message: String) async throws {
        try await Self.git(["add", "--all", "."], in: editor.root)
        try await Self.git(["commit", "-q", "-m", message], in: editor.root)
        try await Self.git(["push", "-q", "origin", "main"], in: editor.root)
    }

    /// A fresh clone of the origin in a new temporary folder, as a CI runner starts.
    func freshClone(_ label: String) async throws -> Checkout {
        let checkout = Checkout(label)
        try await Self.git(["clone", "-q", origin.path, checkout.root], in: checkout.folder.path)
        return checkout
    }

    /// git with a fixed identity and no user or system configuration, bounded in time.
    @discardableResult
    static func git(_ arguments: [String], in directory: String) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in [
            "GIT_AUTHOR_NAME": "Editor", "GIT_AUTHOR_EMAIL": "editor@example.com",
            "GIT_COMMITTER_NAME": "Editor", "GIT_COMMITTER_EMAIL": "editor@example.com",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
        ] {
            environment[key] = value
        }
        let result = try await runProcessWithoutBlocking(
            "/usr/bin/timeout", ["--kill-after=5", "60", "git"] + arguments,
            directory: directory, environment: environment)
        guard result.status == 0 else {
            throw HarnessError("git \(arguments.joined(separator: " ")) failed: \(result.output)")
        }
        return result
    }
}

/// A clone of the content repository: one CI run's working folder.
final class Checkout: Sendable {
    let folder: TemporaryDirectory
    var root: String { folder.file("repo") }
    var output: String { "\(root)/output" }

    init(_ label: String) { folder = TemporaryDirectory("passforge-\(label)") }

    /// Runs the real `passforge` here with `environment` over a clean one
    /// (no CI, store or stall settings from the test runner), bounded in time,
    /// holding none of the test runner's threads.
    func passforge(_ arguments: [String], environment: [String: String], timeout: Int = 120) async throws
        -> ProcessResult
    {
        try await runProcessWithoutBlocking(
            "/usr/bin/timeout", ["--kill-after=5", String(timeout), passforgeExecutable()] + arguments,
            directory: root, environment: passforgeEnvironment(environment))
    }

    func localState() throws -> BuildState { try BuildState.load(from: output) }
}

/// The runner's environment without what would change passforge's behaviour
/// behind a test's back, then `extra`.
func passforgeEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for key in ["CI", "PASSFORGE_DATABASE_URL", "PASSFORGE_SSH_COMMAND", "PASSFORGE_APNS_URL"] {
        environment[key] = nil
    }
    environment.merge(extra) { _, new in new }
    return environment
}

/// A real `passforge` process left running (the host's `serve`, a publish
/// to be killed), with its output captured; its waits are awaited events (BackgroundProcess).
final class BackgroundPassforge: Sendable {
    let process: BackgroundProcess
    var output: String { process.output }

    init(_ arguments: [String], directory: String, environment: [String: String]) throws {
        process = try BackgroundProcess(
            passforgeExecutable(), arguments, directory: directory,
            environment: passforgeEnvironment(environment))
    }

    /// Waits until the output contains `text`; false if the process ended or the time ran out first.
    func waitFor(_ text: String, timeout: Double = 30) async -> Bool {
        await process.contains(text, timeout: .seconds(timeout))
    }

    /// The port `passforge serve --port 0` printed in its banner.
    func servePort(timeout: Double = 30) async throws -> Int {
        let marker = "listening on http://127.0.0.1:"
        return try await process.value("its port", timeout: .seconds(timeout)) { stdout, _ in
            guard let range = stdout.range(of: marker) else { return nil }
            let rest = stdout[range.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            return rest.dropFirst(digits.count).isEmpty ? nil : Int(digits)
        }
    }

    /// SIGKILL: no chance to finish anything.
    func kill() async { await process.kill() }

    /// SIGTERM, then SIGKILL after 10 s.
    func stop() async { await process.stop(grace: .seconds(10)) }

    /// SIGTERM without waiting, for a `defer`.
    func terminate() { process.signal(SIGTERM) }
}

/// One file of a published tree: bytes, inode and modification time, to
/// show that a publish left it alone.
struct PublishedFile: Equatable {
    var bytes: [UInt8]
    var inode: UInt64
    var modified: timespec

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0, let data = FileManager.default.contents(atPath: path) else { return nil }
        bytes = Array(data)
        inode = UInt64(info.st_ino)
        modified = info.st_mtim
    }

    static func == (a: PublishedFile, b: PublishedFile) -> Bool {
        a.bytes == b.bytes && a.inode == b.inode && a.modified.tv_sec == b.modified.tv_sec
            && a.modified.tv_nsec == b.modified.tv_nsec
    }

    /// Every file under `folder` (hidden ones included) by relative path.
    static func tree(_ folder: String) -> [String: PublishedFile] {
        var files: [String: PublishedFile] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(folder)/\(relative)", isDirectory: &isDirectory),
                !isDirectory.boolValue,
                let file = PublishedFile("\(folder)/\(relative)")
            {
                files[relative] = file
            }
        }
        return files
    }
}

/// The host of a static deployment, with real processes: a DEST folder
/// served by nginx with `deploy/nginx-passforge.conf` as shipped, and
/// `passforge serve --output DEST --push` behind it, pushing through the
/// in-process APNs mock with the test PKI's Pass Type ID identity and
/// keeping registrations in its SQLite store. CI runs reach DEST as a folder
/// or, over ssh, as `user@127.0.0.1:DEST` on a throwaway sshd.
// `@unchecked`: it owns processes (not Sendable); one test owns it.
final class StaticDeployment: @unchecked Sendable {
    enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
        case directory, ssh
        var description: String { rawValue }
    }

    let transport: Transport
    let repository: ContentRepository
    let mock: MockAPNsServer
    private let hostFolder = TemporaryDirectory("passforge-host")
    /// The published tree on the host.
    var destinationPath: String { hostFolder.file("www") }
    var databasePath: String { hostFolder.file("registrations.sqlite") }
    /// DEST as CI names it: the folder, or `user@127.0.0.1:/…/www`.
    let destination: String
    /// A CI runner's environment: CI=true, real signing material, the fixed token secret, the ssh command.
    let ci: [String: String]
    let ssh: SSHServer?
    /// The host's checkout (for passforge.yml: the base path, the pass type).
    let hostCheckout: Checkout
    let serve: BackgroundPassforge
    let nginx: StaticHost
    var client: Client { Client(base: nginx.base) }
    var type: String { TestPKI.passType }

    init(_ transport: Transport, passCount: Int, orders: [String] = []) async throws {
        self.transport = transport
        let (mock, apns) = try await PushEndToEndTests.startMock()
        self.mock = mock
        repository = try await ContentRepository(passCount: passCount, orders: orders)
        try FileManager.default.createDirectory(atPath: hostFolder.file("www"), withIntermediateDirectories: true)
        let signing = TestPKI.shared.environment(TestPKI.shared.leaf())
        var ci = signing
        ci["CI"] = "true"
        switch transport {
        case .directory:
            ssh = nil
            destination = hostFolder.file("www")
        case .ssh:
            let ssh = try await SSHServer.start()
            self.ssh = ssh
            destination = "\(ssh.userHost):\(hostFolder.file("www"))"
            ci["PASSFORGE_SSH_COMMAND"] = ssh.sshCommand
        }
        self.ci = ci
        hostCheckout = try await repository.freshClone("host-checkout")
        var host = signing.merging(apns) { _, new in new }
        host["PASSFORGE_DATABASE_URL"] = hostFolder.file("registrations.sqlite")
        host["LOG_LEVEL"] = "info"
        serve = try BackgroundPassforge(
            ["serve", "--port", "0", "--output", hostFolder.file("www"), "--push"],
            directory: hostCheckout.root, environment: host)
        nginx = try await StaticHost(.nginx, root: hostFolder.file("www"), upstreamPort: try await serve.servePort())
    }

    /// Stops every part without waiting for them to end (a `defer` cannot await).
    func stop() {
        nginx.terminate()
        serve.terminate()
        ssh?.terminate()
        let mock = self.mock
        Task { try? await mock.shutdown() }
    }

    /// A value from the host's registration store, read by the sqlite3 command.
    func sql(_ query: String) async throws -> String {
        let result = try await runProcessWithoutBlocking("/usr/bin/timeout", ["30", "sqlite3", databasePath, query])
        guard result.status == 0 else { throw HarnessError("sqlite3 failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The pushes the mock APNs received, from `baseline` on.
    func pushes(after baseline: Int) -> [MockAPNsRequest] { Array(mock.requests.dropFirst(baseline)) }

    func passPath(_ serial: String) -> String { "v1/passes/\(type)/\(serial)" }

    /// What a CI run does after a commit: a fresh clone, built with `--state-from` DEST (which must succeed).
    func ciBuildFromPublishedState(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> (
        checkout: Checkout, build: ProcessResult
    ) {
        let checkout = try await repository.freshClone(label)
        let build = try await checkout.passforge(["build", "--state-from", destination], environment: ci)
        try #require(build.status == 0, "\(build.output)", sourceLocation: sourceLocation)
        return (checkout, build)
    }

    /// The build state published at DEST.
    func publishedState() throws -> BuildState { try BuildState.load(from: destinationPath) }

    /// The bytes of a file at DEST.
    func published(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: "\(destinationPath)/\(relative)").map { Array($0) }
    }

    /// The pass's authenticationToken, read from pass.json inside the published, signed file.
    func token(_ serial: String) async throws -> String {
        try await authenticationToken(ofItemAt: "\(destinationPath)/\(passPath(serial))", "pass \(serial)")
    }

    /// The order's authenticationToken, read from order.json inside the published, signed file.
    func orderToken(_ identifier: String) async throws -> String {
        try await authenticationToken(
            ofItemAt: "\(destinationPath)/v1/orders/\(TestPKI.orderType)/\(identifier)", "order \(identifier)")
    }

    /// `.passforge/indexed-tag` at DEST: the last build whose changes the server's index files show.
    var indexedTag: String? { published(".passforge/indexed-tag").map { String(decoding: $0, as: UTF8.self) } }
}
