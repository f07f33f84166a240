import Foundation
import TestSupport
import Testing

/// What the programs `passforge publish` starts (ssh, and rsync with its own
/// ssh) see of passforge's environment: the real CLI publishes to a real sshd
/// through wrappers that write down their environment, then run the real
/// program.
@Suite(.serialized) struct ChildSecretsTests {
    @Test func sshAndRsyncStartedByPublishSeeNoSecret() throws {
        let server = try SSHServer()
        let built = try BuiltProject(passCount: 2)
        let folder = TemporaryDirectory("passforge-child-env")
        let dumps = folder.file("dumps")
        try FileManager.default.createDirectory(atPath: dumps, withIntermediateDirectories: true)
        for program in ["ssh", "rsync"] {
            let real = try #require(
                runProcess("sh", ["-c", "command -v \(program)"]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines).nilIfEmpty, "\(program) is not installed")
            let script = "#!/bin/sh\nenv > '\(dumps)/\(program).'$$\nexec '\(real)' \"$@\"\n"
            let wrapper = folder.write("bin/\(program)", script)
            #expect(chmod(wrapper, 0o755) == 0)
        }
        let canaries = [
            "PASSFORGE_TOKEN_SECRET": "token-secret-canary-0123456789",
            "PASSFORGE_SIGNING_PASSWORD": "signing-password-canary",
            "PASSFORGE_DATABASE_URL": "postgres://passforge:database-password-canary@db/passforge",
            "AWS_SECRET_ACCESS_KEY": "aws-secret-canary",
            "AWS_SESSION_TOKEN": "aws-session-canary",
        ]
        var environment = canaries
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        environment["PATH"] = folder.file("bin") + ":" + path
        environment["PASSFORGE_SSH_COMMAND"] = server.sshCommand  // "ssh -p …": the wrapper, first in PATH

        let destination = TemporaryDirectory("passforge-remote")
        let target = "\(server.userHost):\(destination.file("site"))"
        let result = try built.publishCommand(target, environment: environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: destination.file("site/.passforge/state.json")))

        let files = try FileManager.default.contentsOfDirectory(atPath: dumps)
        // publish's own ssh (the state, the links) and rsync, which starts ssh again through -e.
        #expect(files.contains { $0.hasPrefix("ssh.") } && files.contains { $0.hasPrefix("rsync.") }, "\(files)")
        #expect(files.filter { $0.hasPrefix("ssh.") }.count >= 2, "\(files)")
        for file in files {
            let seen = String(decoding: try #require(folder.read("dumps/\(file)")), as: UTF8.self)
            #expect(seen.contains("PATH="), "\(file): the wrapper wrote no environment")
            for (name, value) in canaries {
                #expect(!seen.contains(value) && !seen.contains("\(name)="), "\(file) saw \(name)")
            }
            #expect(!seen.split(separator: "\n").contains { $0.hasPrefix("PASSFORGE_") }, "\(file): \(seen)")
        }
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
