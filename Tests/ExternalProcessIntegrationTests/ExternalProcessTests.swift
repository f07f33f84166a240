import ExternalProcess
import Foundation
import Testing

/// ExternalProcess with real programs (sh, cat, pwd, printenv, head).
@Suite("ExternalProcess: one wrapper for every program passforge runs")
struct ExternalProcessTests {
    @Test("exit statuses come back as they are, output and error output apart")
    func exitStatus() async throws {
        let success = try await ExternalProcess("sh", ["-c", "printf out; printf err >&2"]).run()
        #expect(success.termination == .exited(0) && success.succeeded)
        #expect(success.outputText == "out" && success.errorText == "err")
        let failure = try await ExternalProcess("sh", ["-c", "exit 3"]).run()
        #expect(failure.termination == .exited(3) && !failure.succeeded)
    }

    @Test("a program stopped by a signal reports the signal, not a status")
    func signal() async throws {
        let outcome = try await ExternalProcess("sh", ["-c", "kill -KILL $$"]).run()
        #expect(outcome.termination == .signalled(SIGKILL))
        #expect(outcome.termination.description == "was stopped by signal \(SIGKILL)")
    }

    @Test("arguments reach the program as given: no shell splits or expands them")
    func argumentsAsAnArray() async throws {
        let words = ["two words", "$HOME", "*", "'quoted'", "a;b"]
        let outcome = try await ExternalProcess(
            "sh", ["-c", #"for word in "$@"; do printf '%s\n' "$word"; done"#, "sh"] + words
        ).run()
        #expect(outcome.outputText == words.map { $0 + "\n" }.joined())
    }

    @Test("standard output past the cap stops the program (one that never ends too) and fails the run")
    func outputCap() async throws {
        let endless = ExternalProcess(
            "sh", ["-c", "trap '' PIPE; while :; do echo 0123456789; done"], outputLimit: 4096)
        await #expect(throws: ExternalProcess.Failure.self) { try await endless.run() }
        do {
            _ = try await endless.run()
        } catch {
            #expect(error.kind == .outputLimitExceeded)
            #expect(error.description == "sh sent more than 4096 bytes on its standard output; it was stopped")
        }
        // Exactly the cap is fine.
        let exact = try await ExternalProcess("head", ["-c", "4096", "/dev/zero"], outputLimit: 4096).run()
        #expect(exact.succeeded && exact.output.count == 4096)
    }

    @Test("standard error past its cap is read to the end and cut, so a chatty program never blocks")
    func errorCap() async throws {
        let outcome = try await ExternalProcess(
            "sh", ["-c", "head -c 1000000 /dev/zero >&2; echo done"], errorOutputLimit: 100
        ).run()
        #expect(outcome.succeeded && outcome.outputText == "done\n")
        #expect(outcome.errorOutput.count == 100)
    }

    @Test("input bytes reach standard input, also when the program reads only part of them")
    func input() async throws {
        let bytes = Array("line one\nline two\n".utf8)
        let echoed = try await ExternalProcess("cat", input: bytes).run()
        #expect(echoed.output == bytes)
        let partial = try await ExternalProcess(
            "head", ["-c", "1"], input: Array(repeating: UInt8(ascii: "A"), count: 4 << 20)
        ).run()
        #expect(partial.succeeded && partial.outputText == "A")
        let none = try await ExternalProcess("cat").run()
        #expect(none.succeeded && none.output.isEmpty)
    }

    @Test("the environment given is the child's whole environment, but for its secrets")
    func environment() async throws {
        let outcome = try await ExternalProcess("/usr/bin/env", environment: ["PROBE": "one", "PATH": "/usr/bin:/bin"])
            .run()
        #expect(Set(outcome.outputText.split(separator: "\n")) == ["PROBE=one", "PATH=/usr/bin:/bin"])
    }

    @Test("no child sees passforge's secrets or the credentials of the runner; what ssh and git need stays")
    func secretsStayBehind() async throws {
        let secrets = [
            "PASSFORGE_TOKEN_SECRET", "PASSFORGE_SIGNING_PASSWORD", "PASSFORGE_DATABASE_URL",
            "PASSFORGE_DEVICECHECK_KEY",
            "PASSFORGE_SIGNING_KEY", "PASSFORGE_SSH_COMMAND", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
            "GITHUB_TOKEN",
            "PGPASSWORD", "DATABASE_URL", "RSYNC_PASSWORD", "SSH_PRIVATE_KEY", "client_secret",
        ]
        let kept = [
            "PATH": "/usr/bin:/bin", "HOME": "/home/ci", "SSH_AUTH_SOCK": "/tmp/agent.sock", "LANG": "C.UTF-8",
            "GIT_SSH_COMMAND": "ssh -F /dev/null", "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
            "https_proxy": "http://proxy:3128",
        ]
        var given = kept
        for name in secrets { given[name] = "canary-\(name)" }
        let outcome = try await ExternalProcess("/usr/bin/env", environment: given).run()
        let seen = Set(outcome.outputText.split(separator: "\n").map(String.init))
        #expect(seen == Set(kept.map { "\($0.key)=\($0.value)" }))
        #expect(!outcome.outputText.contains("canary"))
        #expect(secrets.allSatisfy(ChildEnvironment.isSecret) && !kept.keys.contains(where: ChildEnvironment.isSecret))
        // With no environment given, passforge's own goes through the same filter.
        let inherited = try await ExternalProcess("/usr/bin/env").run()
        let expected = ChildEnvironment.filtered(ProcessInfo.processInfo.environment)
        #expect(
            Set(inherited.outputText.split(separator: "\n").map(String.init)).isSuperset(
                of: expected.map { "\($0.key)=\($0.value)" }))
        #expect(!inherited.outputText.split(separator: "\n").contains { $0.hasPrefix("PASSFORGE_") })
    }

    @Test("each process gets its own working directory; passforge's own stays as it was")
    func workingDirectory() async throws {
        let before = FileManager.default.currentDirectoryPath
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("passforge-cwd-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try await ExternalProcess("pwd", ["-P"], workingDirectory: folder).run()
        let expected = try FileManager.default.destinationOfSymbolicLinkOrSelf(folder)
        #expect(outcome.outputText == expected + "\n")
        #expect(FileManager.default.currentDirectoryPath == before)

        do {
            _ = try await ExternalProcess("pwd", workingDirectory: folder + "/missing").run()
            Issue.record("a missing working directory must fail")
        } catch {
            #expect(error.kind == .workingDirectoryMissing)
        }
    }

    @Test("a program not found names itself and what to install, and nothing of its arguments")
    func notFound() async throws {
        let missing = ExternalProcess(
            "passforge-no-such-program", ["--password", "hunter2"], installHint: "apt-get install no-such-package")
        do {
            _ = try await missing.run()
            Issue.record("a missing program must fail")
        } catch {
            #expect(error.kind == .notFound)
            #expect(
                error.description
                    == "passforge-no-such-program is not installed here (not found in PATH); install it (apt-get install no-such-package)"
            )
            #expect(!error.description.contains("hunter2"))
        }
        // PATH is the given environment's: sh is not found where PATH holds no folder with it.
        let emptyPath = ExternalProcess("sh", ["-c", "true"], environment: ["PATH": "/nonexistent"])
        #expect(throws: ExternalProcess.Failure.self) { try emptyPath.runBlocking() }
        #expect(ExternalProcess.locate("sh") != nil)
        #expect(ExternalProcess.locate("/nonexistent/sh") == nil)
    }

    @Test("the blocking form, for synchronous callers, gives the same outcome")
    func blocking() throws {
        let outcome = try ExternalProcess("sh", ["-c", "cat; exit 4"], input: Array("in".utf8)).runBlocking()
        #expect(outcome.termination == .exited(4) && outcome.outputText == "in")
    }

    @Test("more runs at once than the cooperative pool has threads: each waits for all the others to have started")
    func moreRunsThanPoolThreads() async throws {
        // A barrier: each program marks itself started, then waits for every mark. Were a wait to hold a thread
        // of the pool (as many threads as cores), the runs past the pool's width would never start, and those
        // started would give up (after 60 s, a guard against a hang, not a measurement) and exit 1.
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "passforge-barrier-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = """
            touch "$1/$2"; tries=0
            while [ "$(ls "$1" | wc -l)" -lt "$3" ]; do tries=$((tries + 1)); [ $tries -gt 6000 ] && exit 1; sleep 0.01; done
            echo "$2"
            """
        let outputs = try await withThrowingTaskGroup(of: ExternalProcess.Outcome.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await ExternalProcess("sh", ["-c", script, "sh", folder, "\(index)", "\(count)"]).run()
                }
            }
            return try await group.reduce(into: [ExternalProcess.Outcome]()) { $0.append($1) }
        }
        #expect(outputs.allSatisfy { $0.succeeded })
        #expect(Set(outputs.map(\.outputText)) == Set((0..<count).map { "\($0)\n" }))
    }
}

extension FileManager {
    /// The folder with symbolic links resolved (the temporary folder may be one), as `pwd -P` prints it.
    fileprivate func destinationOfSymbolicLinkOrSelf(_ path: String) throws -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
}
