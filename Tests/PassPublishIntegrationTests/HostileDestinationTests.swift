import AtomicFiles
import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// Issue 24: the published host is not trusted. A destination whose state,
/// bundle list or folders were tampered with must make `--state-from` and
/// `publish` refuse, with one clear error, touching nothing outside the tree
/// or DEST and leaving the local `.passforge/` as it was.
@Suite struct HostileDestinationTests {
    /// A project built with a bundle and published to a folder, and a file
    /// beside the output folder that no publish or build may touch.
    final class Scene: @unchecked Sendable {
        let built: BuiltProject
        let folder: TemporaryDirectory
        var dest: String { folder.file("site") }
        var victim: String { built.project.directory.file("victims/v1.txt") }
        /// DEST's state and bundle list as published, to restore between attacks.
        let published: [String: [UInt8]]

        init() throws {
            built = try BundlePublishTests.builtWithBundle()
            folder = TemporaryDirectory("passforge-dest")
            let site = folder.file("site")
            _ = try Publisher(outputDirectory: built.output, destination: .directory(site)).publish()
            built.project.directory.write("victims/v1.txt", "precious")
            published = [
                ".passforge/state.json": try #require(AtomicFileSystem.readFile("\(site)/.passforge/state.json")),
                BundleList.path: try #require(AtomicFileSystem.readFile("\(site)/\(BundleList.path)")),
            ]
        }

        func restore() throws {
            for (name, bytes) in published { try AtomicFileSystem.write(bytes, to: "\(dest)/\(name)") }
        }

        /// Rewrites one of DEST's JSON files (state.json or bundles.json) as `change` says.
        func tamper(_ name: String, _ change: (inout [String: Any]) -> Void) throws {
            var object = try #require(try JSONSerialization.jsonObject(with: Data(published[name]!)) as? [String: Any])
            change(&object)
            try AtomicFileSystem.write(
                Array(try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])),
                to: "\(dest)/\(name)")
        }

        var victimIsIntact: Bool { AtomicFileSystem.readFile(victim) == Array("precious".utf8) }
    }

    /// A pass record of the published state, as a JSON object.
    static func record(_ state: [String: Any], _ serial: String = "C-0000") -> [String: Any] {
        ((state["passes"] as! [String: Any])["\(TestPKI.passType)/\(serial)"] as! [String: Any])
    }

    /// Adds a record for a pass that is not in the content (so a build removes its files).
    static func addPass(
        _ state: inout [String: Any], key: String? = nil, serial: String = "GONE-1",
        _ change: (inout [String: Any]) -> Void
    ) {
        var record = Self.record(state)
        record["serialNumber"] = serial
        change(&record)
        var passes = state["passes"] as! [String: Any]
        passes[key ?? "\(record["passTypeIdentifier"]!)/\(serial)"] = record
        state["passes"] = passes
    }

    /// Each attack of the issue, with a phrase its error must hold.
    static let attacks:
        [(name: String, file: String, phrase: String, change: @Sendable (inout [String: Any]) -> Void)] = [
            (
                "a removed pass's downloadPath leaves the tree", ".passforge/state.json",
                "which is not download/<capability>.pkpass",
                { addPass(&$0) { $0["downloadPath"] = "../victims/v1.txt" } }
            ),
            (
                "a tokenPath leaves the tree", ".passforge/state.json", "which is not by-token/",
                { addPass(&$0) { $0["tokenPath"] = "by-token/../../victims/v1.txt" } }
            ),
            (
                "a removed pass's files leave the tree", ".passforge/state.json",
                "which is not a pass, token link or download path",
                { state in
                    state["removedPasses"] = [
                        "\(TestPKI.passType)/GONE-2": [
                            "passTypeIdentifier": TestPKI.passType, "serialNumber": "GONE-2",
                            "tokenHash": String(repeating: "a", count: 64),
                            "removedTag": 1, "files": ["v1/passes/\(TestPKI.passType)/GONE-2", "../victims/v1.txt"],
                        ]
                    ]
                }
            ),
            (
                "a bundle's downloadPath leaves the tree", BundleList.path,
                "which is not download/<capability>.pkpasses",
                { list in
                    var bundles = list["bundles"] as! [[String: Any]]
                    bundles[0]["downloadPath"] = "../victims/v1.txt"
                    list["bundles"] = bundles
                }
            ),
            (
                "a key is not type/serial", ".passforge/state.json",
                "is listed under a key that is not its passTypeIdentifier/serialNumber",
                { addPass(&$0, key: "\(TestPKI.passType)/OTHER") { _ in } }
            ),
            (
                "a serial holds a newline and a formula", ".passforge/state.json",
                "which does not match [A-Za-z0-9][A-Za-z0-9._~-]{0,127}",
                { addPass(&$0, serial: "X\n=cmd|' /C calc'!A0") { _ in } }
            ),
            (
                "the last update tag is Int64.max", ".passforge/state.json", "lastUpdateTag is 9223372036854775807",
                { $0["lastUpdateTag"] = Int64.max }
            ),
            (
                "the last update tag is far ahead", ".passforge/state.json", "lastUpdateTag is 99999999999999",
                { $0["lastUpdateTag"] = 99_999_999_999_999 as Int64 }
            ),
            (
                "a pass's update tag is Int64.max", ".passforge/state.json", "has updateTag 9223372036854775807",
                { addPass(&$0) { $0["updateTag"] = Int64.max } }
            ),
            (
                "a negative update tag", ".passforge/state.json", "has updateTag -5",
                { addPass(&$0) { $0["updateTag"] = -5 } }
            ),
        ]

    @Test func everyHostileStateIsRefusedWholeAndTheLocalStateIsKept() throws {
        let scene = try Scene()
        let clone = TemporaryDirectory("passforge-clone")
        let withState = clone.file("with-state")
        let fresh = clone.file("fresh")
        _ = try PublishDestination.directory(scene.dest).fetchState(into: withState)
        let localBefore = ProjectFixture.snapshotOf("\(withState)/.passforge")
        for attack in Self.attacks {
            try scene.restore()
            try scene.tamper(attack.file, attack.change)
            for output in [withState, fresh] {
                let error = #expect(throws: PublishError.self, "\(attack.name)") {
                    try PublishDestination.directory(scene.dest).fetchState(into: output)
                }
                let message = error?.description ?? ""
                #expect(
                    message.hasPrefix("the build state at \(scene.dest) is refused, and nothing was taken from it: "),
                    "\(attack.name): \(message)")
                #expect(message.contains(attack.phrase), "\(attack.name): \(message)")
                #expect(!message.contains("\n"), "\(attack.name): one line: \(message)")
            }
            #expect(ProjectFixture.snapshotOf("\(withState)/.passforge") == localBefore, "\(attack.name)")
            #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: fresh)), "\(attack.name)")
            #expect(!FileManager.default.fileExists(atPath: "\(fresh)/\(BundleList.path)"), "\(attack.name)")
            // publish refuses the same destination: it would plan removals from that state.
            let publish = #expect(throws: PublishError.self, "\(attack.name)") {
                try Publisher(outputDirectory: scene.built.output, destination: .directory(scene.dest)).publish()
            }
            #expect(
                publish?.description.contains("is refused") == true, "\(attack.name): \(String(describing: publish))")
            #expect(scene.victimIsIntact, "\(attack.name)")
        }
    }

    /// The attack of the issue, end to end: a fresh clone's `passforge build --state-from DEST`.
    @Test func aFreshCloneBuildFromAHostileDestinationDeletesNothing() throws {
        let scene = try Scene()
        for attack in Self.attacks where attack.name.contains("downloadPath leaves the tree") {
            try scene.restore()
            try scene.tamper(attack.file, attack.change)
            try FileManager.default.removeItem(atPath: scene.built.output)
            let result = try scene.built.project.passforge(
                ["build", "--state-from", scene.dest], environment: scene.built.environment)
            #expect(result.status != 0, "\(attack.name): \(result.output)")
            #expect(
                result.stderr.contains("the build state at \(scene.dest) is refused"),
                "\(attack.name): \(result.output)")
            #expect(result.stderr.contains(attack.phrase), "\(attack.name): \(result.output)")
            #expect(scene.victimIsIntact, "\(attack.name)")
            #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: scene.built.output)), "\(attack.name)")
        }
    }

    /// Defence in depth: a local state or bundle list that lists a path outside the tree (fetched by an older
    /// passforge, or written by hand) stops the build before it deletes anything.
    @Test func theBuildRefusesAHostileLocalStateAndBundleList() throws {
        let scene = try Scene()
        let output = scene.built.output
        let goodState = try #require(AtomicFileSystem.readFile(BuildState.path(in: output)))
        let goodBundles = try #require(AtomicFileSystem.readFile("\(output)/\(BundleList.path)"))
        for (index, attack) in Self.attacks.enumerated() where attack.name.contains("leaves the tree") {
            let name = attack.file
            scene.built.writeFamily(points: 10 + index)  // a change, so that the build does not stop early
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(name == BundleList.path ? goodBundles : goodState))
                    as? [String: Any])
            attack.change(&object)
            try AtomicFileSystem.write(
                Array(try JSONSerialization.data(withJSONObject: object)), to: "\(output)/\(name)")
            let result = try scene.built.project.passforge(["build"], environment: scene.built.environment)
            #expect(result.status != 0, "\(attack.name): \(result.output)")
            #expect(result.stderr.contains("is refused"), "\(attack.name): \(result.output)")
            #expect(scene.victimIsIntact, "\(attack.name)")
            try AtomicFileSystem.write(goodState, to: BuildState.path(in: output))
            try AtomicFileSystem.write(goodBundles, to: "\(output)/\(BundleList.path)")
        }
        // The good state builds.
        let result = try scene.built.project.passforge(["build"], environment: scene.built.environment)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func anOversizeStateIsRefusedWithoutBeingRead() throws {
        let scene = try Scene()
        // A sparse file: 300 MB long, no disk used; it would take 600 MB of memory to load.
        let path = "\(scene.dest)/.passforge/state.json"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(BuildState.maximumPublishedSize) + 44 << 20)
        try handle.close()
        let clone = TemporaryDirectory("passforge-clone")
        let error = #expect(throws: PublishError.self) {
            try PublishDestination.directory(scene.dest).fetchState(into: clone.file("output"))
        }
        #expect(
            error?.description.contains("is 300 MB, more than the 256 MB a published build's state.json may be")
                == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: clone.file("output"))))
    }

    @Test func publishNeverWritesThroughALinkInsideTheDestination() throws {
        let built = try BuiltProject(passCount: 3)
        for linked in ["v1", "v1/passes", "by-token", "download", ".passforge"] {
            let folder = TemporaryDirectory("passforge-dest")
            let outside = TemporaryDirectory("passforge-outside")
            let dest = folder.file("site")
            try FileManager.default.createDirectory(atPath: "\(dest)/\(linked)", withIntermediateDirectories: true)
            try FileManager.default.removeItem(atPath: "\(dest)/\(linked)")
            try FileManager.default.createSymbolicLink(atPath: "\(dest)/\(linked)", withDestinationPath: outside.path)
            let error = #expect(throws: PublishError.self, "\(linked)") {
                try Publisher(outputDirectory: built.output, destination: .directory(dest)).publish()
            }
            #expect(
                error?.description.contains("\(dest)/\(linked) is a symbolic link") == true,
                "\(linked): \(String(describing: error))")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty,
                "\(linked): written through the link")
        }
    }

    @Test func removalsNeverDeleteThroughALinkInsideTheDestination() throws {
        let built = try BuiltProject(passCount: 3)
        let folder = TemporaryDirectory("passforge-dest")
        let dest = folder.file("site")
        _ = try Publisher(outputDirectory: built.output, destination: .directory(dest)).publish()
        let gone = try built.record("C-0002")
        try built.build(count: 2)
        // The pass's folder is swapped for a link to a folder holding a file of the same name.
        let outside = TemporaryDirectory("passforge-outside")
        outside.write(gone.identifier, "not the destination's")
        let passes = "\(dest)/v1/passes/\(TestPKI.passType)"
        try FileManager.default.removeItem(atPath: passes)
        try FileManager.default.createSymbolicLink(atPath: passes, withDestinationPath: outside.path)
        #expect(throws: PublishError.self) {
            try Publisher(outputDirectory: built.output, destination: .directory(dest)).publish()
        }
        #expect(outside.read(gone.identifier) == Array("not the destination's".utf8))
    }

    @Test func stateFromNeverReadsAStateFileThroughALink() throws {
        let scene = try Scene()
        let secret = TemporaryDirectory("passforge-outside")
        secret.write("secret.csv", "a secret outside DEST\n")
        for name in [".passforge/downloads.csv", ".passforge/state.json", BundleList.path] {
            try scene.restore()
            let path = "\(scene.dest)/\(name)"
            let kept = try #require(AtomicFileSystem.readFile(path))
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: secret.file("secret.csv"))
            let clone = TemporaryDirectory("passforge-clone")
            let error = #expect(throws: PublishError.self, "\(name)") {
                try PublishDestination.directory(scene.dest).fetchState(into: clone.file("output"))
            }
            #expect(
                error?.description.contains("\(path) is a symbolic link") == true,
                "\(name): \(String(describing: error))")
            for (file, bytes) in ProjectFixture.snapshotOf(clone.path) {
                #expect(
                    !String(decoding: bytes, as: UTF8.self).contains("a secret outside DEST"),
                    "\(name): copied into \(file)")
            }
            try FileManager.default.removeItem(atPath: path)
            try AtomicFileSystem.write(kept, to: path)
        }
    }

    @Test func aHostileStateOverSSHIsRefusedToo() throws {
        let server = try SSHServer()
        let scene = try Scene()
        let environment = ProcessInfo.processInfo.environment.merging(["PASSFORGE_SSH_COMMAND": server.sshCommand]) {
            $1
        }
        let destination = try PublishDestination(parsing: "\(server.userHost):\(scene.dest)")
        let clone = TemporaryDirectory("passforge-clone")
        try scene.tamper(".passforge/state.json", Self.attacks[0].change)
        let error = #expect(throws: PublishError.self) {
            try destination.fetchState(into: clone.file("output"), environment: environment)
        }
        #expect(
            error?.description.contains("the build state at \(destination) is refused") == true,
            "\(String(describing: error))")
        #expect(error?.description.contains(Self.attacks[0].phrase) == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: clone.file("output"))))
        #expect(scene.victimIsIntact)

        // A state file that is a link is not read over ssh either.
        try scene.restore()
        let csv = "\(scene.dest)/.passforge/downloads.csv"
        try FileManager.default.removeItem(atPath: csv)
        try FileManager.default.createSymbolicLink(atPath: csv, withDestinationPath: scene.victim)
        let linked = #expect(throws: PublishError.self) {
            try destination.fetchState(into: clone.file("output"), environment: environment)
        }
        #expect(
            linked?.description.contains(".passforge/downloads.csv\" is a symbolic link") == true,
            "\(String(describing: linked))")
    }

    /// PASSFORGE_SSH_COMMAND with a key whose path holds a space and a quote reaches the host, for ssh and rsync alike.
    @Test func anSSHCommandIsSplitAsAShellWould() throws {
        let server = try SSHServer()
        let keys = TemporaryDirectory("passforge-keys")
        let key = keys.file("my keys/it's key")
        try FileManager.default.createDirectory(atPath: keys.file("my keys"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: server.clientKey, toPath: key)
        let command = server.sshCommand.replacingOccurrences(
            of: "-i \(server.clientKey)", with: #"-i "\#(keys.path)/my keys/it's key""#)
        #expect(try SSHCommandLine(parsing: command).options.contains(key))
        let built = try BuiltProject(passCount: 2)
        let folder = TemporaryDirectory("passforge-remote")
        let dest = DestinationTree(root: folder.file("site"))
        let environment = ProcessInfo.processInfo.environment.merging(["PASSFORGE_SSH_COMMAND": command]) { $1 }
        let summary = try Publisher(
            outputDirectory: built.output, destination: PublishDestination(parsing: "\(server.userHost):\(dest.root)"),
            environment: environment
        ).publish()
        #expect(summary.passesSent == 2 && summary.stateSent)
        try dest.expectConsistent()
    }

    @Test func sshCommandWords() throws {
        #expect(try SSHCommandLine(parsing: "ssh").words == ["ssh"])
        #expect(try SSHCommandLine(parsing: "  ssh  -p 2222\t-i key ").words == ["ssh", "-p", "2222", "-i", "key"])
        #expect(
            try SSHCommandLine(parsing: #"ssh -i "/a b/k" -o 'User=x y'"#).words == [
                "ssh", "-i", "/a b/k", "-o", "User=x y",
            ])
        #expect(try SSHCommandLine(parsing: #"ssh -i /a\ b/k"#).words == ["ssh", "-i", "/a b/k"])
        #expect(try SSHCommandLine(parsing: #"ssh -i "it's \"q\" \\ \x""#).words == ["ssh", "-i", #"it's "q" \ \x"#])
        #expect(
            try SSHCommandLine(parsing: #"ssh -o "ProxyCommand=nc %h %p" ''"#).words == [
                "ssh", "-o", "ProxyCommand=nc %h %p", "",
            ])
        #expect(try SSHCommandLine(parsing: #"ssh -i 'a'"b"c"#).words == ["ssh", "-i", "abc"])
        #expect(
            try SSHCommandLine(parsing: "ssh -i \"it's\" -o 'a b'").rsyncArgument == "'ssh' '-i' 'it''s' '-o' 'a b'")
        for bad in [
            "ssh -i 'key", #"ssh -i "key"#, #"ssh \"#, "ssh; reboot", "ssh $(id)", "ssh `id`", #"ssh "$HOME/k""#,
            "ssh | x",
            "ssh -i ~/k", "ssh -i *.key", "ssh > f", "", "''", "ssh\u{1B}[2J",
        ] {
            #expect(throws: PublishError.self, "\(bad.debugDescription)") { try SSHCommandLine(parsing: bad) }
        }
        let error = #expect(throws: PublishError.self) { try SSHCommandLine(parsing: "ssh -i 'key") }
        #expect(
            error?.description.contains("PASSFORGE_SSH_COMMAND cannot be read as a command (a ' is not closed)") == true
        )
    }
}

extension ProjectFixture {
    /// Every regular file under `folder`, by relative path (none when it is missing).
    static func snapshotOf(_ folder: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            if let bytes = AtomicFileSystem.readFile("\(folder)/\(relative)") { files[relative] = bytes }
        }
        return files
    }
}
