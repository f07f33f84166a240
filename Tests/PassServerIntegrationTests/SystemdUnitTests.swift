import Foundation
import TestSupport
import Testing

/// `deploy/passforge.service` and the README's systemd setup: the unit
/// verifies, says what the README says, and the README's commands give the
/// CI deploy user the published tree and nothing of the server's secrets.
@Suite struct SystemdUnitTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relative), encoding: .utf8)
    }

    /// The unit's `Key=value` lines (comments left out); a key may repeat.
    static func directives() throws -> [(key: String, value: String)] {
        try text("deploy/passforge.service").split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    static func directive(_ key: String) throws -> String? { try directives().last { $0.key == key }?.value }

    /// The commands of the README's systemd block, without `sudo ` and trailing comments.
    static func readmeCommands() throws -> [String] {
        let readme = try text("README.md")
        let section = try #require(readme.range(of: "### systemd\n"))
        let block = try #require(readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```", range: block.upperBound..<readme.endIndex))
        return readme[block.upperBound..<end.lowerBound].split(separator: "\n").map(Self.command)
    }

    /// The commands in the unit's header comment.
    static func unitCommands() throws -> [String] {
        try text("deploy/passforge.service").split(separator: "\n").filter { $0.hasPrefix("#   sudo ") }
            .map { Self.command($0.dropFirst(4)) }
    }

    static func command(_ line: Substring) -> String {
        var line = String(line)
        if let comment = line.range(of: "   #") { line = String(line[..<comment.lowerBound]) }
        if line.hasPrefix("sudo ") { line.removeFirst(5) }
        return line.trimmingCharacters(in: .whitespaces)
    }

    @Test func theUnitVerifiesAndSetsItsLimits() async throws {
        let folder = TemporaryDirectory("passforge-unit")
        // verify wants ExecStart's program to exist: the binary these tests run.
        let unit = try Self.text("deploy/passforge.service")
            .replacingOccurrences(of: "/usr/local/bin/passforge", with: passforgeExecutable())
        let path = folder.write("passforge.service", unit)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            try Test.cancel("skipped: systemd-analyze is not installed (apt-get install systemd)")
        }
        let verified = try await runProcessWithoutBlocking("/usr/bin/systemd-analyze", ["verify", path])
        // verify exits 0 on some warnings: anything said is a failure too.
        #expect(verified.status == 0 && verified.output.isEmpty, "\(verified.output)")

        let limit = try #require(try Self.directive("LimitNOFILE"), "the unit sets no LimitNOFILE")
        #expect((Int(limit) ?? 0) >= 16384, "LimitNOFILE=\(limit)")
        #expect(try Self.directive("StateDirectoryMode") == "0700")
        #expect(try Self.directive("Group") == "passforge")
        #expect(try Self.directive("SupplementaryGroups") == "passforge-publish")
        #expect(try Self.directive("EnvironmentFile") == "/etc/passforge/passforge.env")
    }

    @Test func theUnitsCommentAndTheReadmeGiveTheSameCommands() throws {
        let readme = try Self.readmeCommands()
        let unit = try Self.unitCommands()
        #expect(!unit.isEmpty)
        for command in unit {
            #expect(readme.contains { $0 == command || $0.hasPrefix(command + " && ") }, "the README lacks: \(command)")
        }
        let setup = ["install ", "groupadd ", "useradd ", "usermod "]
        for command in readme where setup.contains(where: command.hasPrefix) {
            #expect(unit.contains(command), "the unit's comment lacks: \(command)")
        }
        // The deploy user joins the publish group and no other.
        let joins = readme.filter { $0.hasPrefix("usermod ") }
        #expect(joins == ["usermod -aG passforge-publish deploy"], "\(joins)")
        // Nothing of the server's secrets belongs to the publish group.
        for command in readme where command.contains("/etc/passforge") || command.contains("/var/lib/passforge") {
            #expect(!command.contains("passforge-publish"), "\(command)")
        }
    }

    /// The README's commands run as root into a temporary folder, with numeric users for
    /// `deploy`, `passforge` and the groups; `setpriv` then tries each access as each user.
    @Test func theDeployUserWritesThePublishedTreeAndReadsNoSecret() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            try Test.cancel("skipped: needs root (to make files of other users) and setpriv (util-linux)")
        }
        let host = try HostLayout()
        try await host.runReadmeCommands()
        let deploy = host.deploy
        let server = host.server
        let reader = HostLayout.Identity(uid: 61_004, gid: 61_004, groups: [])

        // The deploy user publishes: new folders and files, the state replaced by rename.
        try await host.expect(
            deploy, can: true,
            """
            mkdir -p $o/v1/passes/pass.t $o/by-token/pass.t $o/download && echo pass > $o/v1/passes/pass.t/S1 \
            && echo state > $o/.passforge/.state.json.tmp && mv $o/.passforge/.state.json.tmp $o/.passforge/state.json
            """)
        let secrets = [
            "etc/passforge/passforge.env", "etc/passforge/pass.p12",
            "var/lib/passforge/registrations.sqlite",
        ]
        for secret in secrets {
            try await host.expect(deploy, can: false, "cat \(secret)")
        }
        try await host.expect(deploy, can: false, "ls etc/passforge")
        try await host.expect(deploy, can: false, "touch $o/v1/devices/forged")

        // The server writes its index files and its state in the tree, reads its key, and not root's file.
        try await host.expect(
            server, can: true,
            """
            mkdir -p $o/v1/devices/dev1/registrations && echo '{}' > $o/v1/devices/dev1/registrations/.t.tmp \
            && mv $o/v1/devices/dev1/registrations/.t.tmp $o/v1/devices/dev1/registrations/pass.t \
            && mkdir -p $o/.passforge/index-locks && echo 1 > $o/.passforge/.indexed-tag.tmp \
            && mv $o/.passforge/.indexed-tag.tmp $o/.passforge/indexed-tag && cat $o/.passforge/state.json \
            && cat etc/passforge/pass.p12 && echo row > var/lib/passforge/registrations.sqlite
            """)
        try await host.expect(server, can: false, "cat etc/passforge/passforge.env")
        // The static host in front (no group of passforge's) reads what it serves.
        try await host.expect(reader, can: true, "cat $o/v1/passes/pass.t/S1 $o/v1/devices/dev1/registrations/pass.t")
    }
}

/// A host's folders made by the README's commands under a temporary root.
struct HostLayout {
    struct Identity {
        var uid: Int
        var gid: Int
        var groups: [Int]
    }

    let folder = TemporaryDirectory("passforge-host")
    /// Numeric stand-ins for the names the README uses.
    let users = ["root": 0, "passforge": 61_002, "deploy": 61_001]
    let groups = Self.groupIDs
    static let groupIDs = ["root": 0, "passforge": 61_002, "passforge-publish": 61_003]
    let deploy: Identity
    let server: Identity

    init() throws {
        #expect(chmod(folder.path, 0o755) == 0)
        let readme = try SystemdUnitTests.readmeCommands()
        let joined = readme.filter { $0.hasPrefix("usermod -aG ") && $0.hasSuffix(" deploy") }
            .flatMap { $0.dropFirst(12).dropLast(7).split(separator: ",").map(String.init) }
        let ids = Self.groupIDs
        deploy = Identity(
            uid: 61_001, gid: 61_001,
            groups: try joined.map { try #require(ids[$0], "unknown group \($0)") })
        let supplementary =
            try SystemdUnitTests.directive("SupplementaryGroups")?.split(separator: " ")
            .map(String.init) ?? []
        let primary = try #require(try SystemdUnitTests.directive("Group"))
        server = Identity(
            uid: 61_002, gid: try #require(ids[primary]),
            groups: try supplementary.map { try #require(ids[$0], "unknown group \($0)") })
    }

    /// `command` with users and groups as numbers and the host's paths under the temporary root.
    func local(_ command: String) -> String {
        var words = command.split(separator: " ").map(String.init)
        for index in words.indices.dropFirst() {
            if words[index - 1] == "-o", let uid = users[words[index]] { words[index] = String(uid) }
            if words[index - 1] == "-g", let gid = groups[words[index]] { words[index] = String(gid) }
        }
        return words.joined(separator: " ").replacingOccurrences(of: " /srv/", with: " \(folder.path)/srv/")
            .replacingOccurrences(of: " /etc/", with: " \(folder.path)/etc/")
    }

    /// The README's `install` commands (not the binary's), its key file command, and the state folder
    /// systemd makes for the unit (StateDirectory=, StateDirectoryMode=).
    func runReadmeCommands() async throws {
        let readme = try SystemdUnitTests.text("README.md")
        let keyPattern = /`sudo (install -o passforge [^`]+ pass\.p12 \/etc\/passforge\/)`/
        let keyCommand = try #require(
            readme.firstMatch(of: keyPattern)?.output.1,
            "the README no longer says how to install a key file")
        let key = folder.write("pass.p12", "private key")
        var commands = try SystemdUnitTests.readmeCommands()
            .filter { $0.hasPrefix("install ") && !$0.contains("bin/passforge") }
        commands.append(String(keyCommand).replacingOccurrences(of: " pass.p12 ", with: " \(key) "))
        let mode = try #require(try SystemdUnitTests.directive("StateDirectoryMode"))
        commands.append("install -d -o passforge -g passforge -m \(mode) /var/lib/passforge")
        // The store's file as the server makes it (UMask=0022), and something in each secret file
        // (appended: same inode and mode).
        commands.append("install -o passforge -g passforge -m 644 /dev/null /var/lib/passforge/registrations.sqlite")
        for command in commands {
            let local = local(command).replacingOccurrences(of: " /var/", with: " \(folder.path)/var/")
            let result = try await runProcessWithoutBlocking("sh", ["-c", local])
            #expect(result.status == 0, "\(local): \(result.output)")
        }
        let filled = try await runProcessWithoutBlocking(
            "sh",
            [
                "-c",
                """
                echo PASSFORGE_TOKEN_SECRET=canary-secret >> etc/passforge/passforge.env \
                && echo push-tokens >> var/lib/passforge/registrations.sqlite
                """,
            ], directory: folder.path)
        #expect(filled.status == 0, "\(filled.output)")
    }

    /// Runs `script` in the root folder as `identity` (umask 022, as a login and the unit's UMask=), with
    /// `$o` the published tree, and expects it to succeed or to be refused.
    func expect(
        _ identity: Identity, can: Bool, _ script: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let groupList =
            identity.groups.isEmpty
            ? ["--clear-groups"] : ["--groups", identity.groups.map(String.init).joined(separator: ",")]
        let result = try await runProcessWithoutBlocking(
            "/usr/bin/setpriv",
            [
                "--reuid", String(identity.uid), "--regid", String(identity.gid),
            ] + groupList + ["--", "sh", "-c", "umask 022 && o=srv/passforge/output && \(script)"],
            directory: folder.path)
        #expect(
            (result.status == 0) == can,
            "uid \(identity.uid) \(can ? "could not" : "could"): \(script)\n\(result.output)",
            sourceLocation: sourceLocation)
    }
}
