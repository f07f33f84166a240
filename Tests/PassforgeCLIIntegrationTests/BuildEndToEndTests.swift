import Crypto
import Foundation
import PassBuild
import PassModel
import TestSupport
import Testing
import WalletTree

/// `passforge build` as a real process, over a real project, with every
/// pass checked by independent tools (unzip, openssl).
@Suite struct BuildEndToEndTests {
    let pki = TestPKI.shared

    func state(_ project: ProjectFixture) throws -> BuildState {
        try BuildState.load(from: project.output)
    }

    @Test func buildsVerifiablePassesWithDerivedTokensAndDownloads() async throws {
        let project = ProjectFixture(passCount: 3)
        let leaf = pki.leaf()
        let result = try await project.passforge(["build"], environment: pki.environment(leaf))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("built 3, unchanged 0, removed 0"))

        let state = try state(project)
        #expect(state.passes.count == 3)
        for record in state.passes.values {
            let path = "\(project.output)/\(record.path)"
            let verified = try await PassVerifier.verifyWithoutBlocking(path, root: pki.root)
            #expect(verified.passJSON["serialNumber"] as? String == record.identifier)
            #expect(verified.passJSON["passTypeIdentifier"] as? String == TestPKI.passType)
            #expect(verified.files.keys.contains("icon.png"))
            // The token rule: base64url(HMAC-SHA256(secret, type + "/" + serial)).
            let mac = HMAC<SHA256>.authenticationCode(
                for: Array("\(TestPKI.passType)/\(record.identifier)".utf8),
                using: SymmetricKey(data: Array("test-token-secret-0123456789".utf8)))
            let expected = Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(verified.passJSON["authenticationToken"] as? String == expected)
            // The download link is the same file (a hard link), served without auth.
            let download = "\(project.output)/\(record.downloadPath)"
            let a = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64
            let b = try FileManager.default.attributesOfItem(atPath: download)[.systemFileNumber] as? UInt64
            #expect(a != nil && a == b)
            #expect(record.etag.hasPrefix("\"") && record.etag.count == 34)
        }
        let csv = String(decoding: project.directory.read("output/.passforge/downloads.csv") ?? [], as: UTF8.self)
        #expect(csv.hasPrefix("passTypeIdentifier,serialNumber,download path\n"))
        #expect(csv.contains("\(TestPKI.passType),C-0001,download/"))
    }

    @Test func incrementalBuildsKeepUnchangedPassesByteForByte() async throws {
        let project = ProjectFixture(passCount: 4)
        let env = pki.environment(pki.leaf())
        try #require(try await project.passforge(["build"], environment: env).status == 0)
        let first = try state(project)
        let firstTree = project.snapshot()

        let noop = try await project.passforge(["build"], environment: env)
        #expect(noop.stdout.contains("built 0, unchanged 4, removed 0"), "\(noop.output)")
        #expect(project.snapshot() == firstTree)

        // One pass changes: only it is re-signed, with a greater tag.
        project.writeList(count: 4, points: { $0 == 2 ? 999 : $0 })
        let one = try await project.passforge(["build"], environment: env)
        #expect(one.stdout.contains("built 1, unchanged 3, removed 0"), "\(one.output)")
        let second = try state(project)
        let key = "\(TestPKI.passType)/C-0002"
        #expect(second.passes[key]!.updateTag > first.passes[key]!.updateTag)
        #expect(second.passes[key]!.etag != first.passes[key]!.etag)
        for other in ["C-0000", "C-0001", "C-0003"] {
            let k = "\(TestPKI.passType)/\(other)"
            #expect(second.passes[k] == first.passes[k])
            #expect(
                project.directory.read("output/v1/passes/\(TestPKI.passType)/\(other)")
                    == firstTree["v1/passes/\(TestPKI.passType)/\(other)"])
        }

        // A pass removed from content is removed from the tree and reported.
        project.writeList(count: 3, points: { $0 == 2 ? 999 : $0 })
        let removed = try await project.passforge(["build"], environment: env)
        #expect(removed.stdout.contains("removed \(TestPKI.passType)/C-0003"), "\(removed.output)")
        #expect(removed.stdout.contains("removed 1"))
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/v1/passes/\(TestPKI.passType)/C-0003"))
        #expect(
            !FileManager.default.fileExists(
                atPath: "\(project.output)/\(second.passes["\(TestPKI.passType)/C-0003"]!.downloadPath)"))

        // A template change rebuilds every pass that uses it.
        project.directory.write(
            "templates/card/logo.png", bytes: PNGFactory.png(width: 120, height: 40, rgb: (1, 2, 3)))
        let template = try await project.passforge(["build"], environment: env)
        #expect(template.stdout.contains("built 3, unchanged 0"), "\(template.output)")
    }

    /// Passes and orders: a build killed when everything is staged, or half-way through its moves.
    @Test func aKilledBuildLeavesThePreviousTreeAndTheNextBuildFinishesIt() async throws {
        let project = ProjectFixture(passCount: 5)
        project.addOrderTemplate()
        for order in ["SO-1", "SO-2"] { project.writeOrder(order) }
        let env = pki.environment(pki.leaf())
        try #require(try await project.passforge(["build"], environment: env).status == 0)
        let before = project.snapshot()
        project.writeList(count: 5, points: { $0 + 100 })
        for order in ["SO-1", "SO-2"] { project.writeOrder(order, status: "completed", shipping: "delivered") }

        // Killed after every pass and order is signed and staged, before anything is committed.
        try killBuild(project, env: env, at: "staged")
        #expect(project.snapshot().filter { !$0.key.hasPrefix(".passforge/staging") } == before)
        for record in try state(project).passes.values {
            _ = try await PassVerifier.verifyWithoutBlocking("\(project.output)/\(record.path)", root: pki.root)
        }

        // Killed half-way through moving files into place: the next build rolls forward.
        try killBuild(project, env: env, at: "applying")
        let next = try await project.passforge(["build"], environment: env)
        #expect(next.status == 0, "\(next.output)")
        #expect(next.stderr.contains("finished the previous build"))
        #expect(next.stdout.contains("built 0, unchanged 7"), "\(next.output)")
        let state = try state(project)
        #expect(state.passes.values.filter { $0.kind == .order }.count == 2)
        for record in state.passes.values {
            // Every pass and order verifies with OpenSSL (cms -verify and SHA-256 for an order) and is the new one.
            let verified = try await PassVerifier.verifyWithoutBlocking(
                "\(project.output)/\(record.path)", root: pki.root)
            let bytes = project.directory.read("output/\(record.path)")!
            #expect(ParallelPackagerETag.of(bytes) == record.etag)
            if record.kind == .order {
                #expect(verified.passJSON["status"] as? String == "completed")
            } else {
                let points = (verified.passJSON["generic"] as? [String: Any]).flatMap {
                    ($0["secondaryFields"] as? [[String: Any]])?.first?["value"] as? Int
                }
                #expect((points ?? 0) >= 100)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/.passforge/journal.json"))
    }

    @Test func developmentSigningIsLoudAndRefusedUnderCIWithoutTheFlag() async throws {
        let project = ProjectFixture(passCount: 1)
        let secret = ["PASSFORGE_TOKEN_SECRET": "test-token-secret-0123456789"]
        let refused = try await project.passforge(
            ["build", "--initial"], environment: secret.merging(["CI": "true"]) { $1 })
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("--development-signing"))
        #expect(project.snapshot().filter { $0.key.hasPrefix("v1/") }.isEmpty)

        let allowed = try await project.passforge(
            ["build", "--initial", "--development-signing"], environment: secret.merging(["CI": "true"]) { $1 })
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowed.stderr.contains("will NOT install on a device"))
        let record = try #require(try state(project).passes.values.first)
        _ = try await PassVerifier.verifyWithoutBlocking(
            "\(project.output)/\(record.path)", root: project.directory.file(".passforge/dev-pki/root-certificate.pem"))
    }

    @Test func aBuildWithNoPreviousStateUnderCIIsRefusedUnlessInitialOrAFirstDeploy() async throws {
        let project = ProjectFixture(passCount: 2)
        var env = pki.environment(pki.leaf())
        env["CI"] = "true"
        let refused = try await project.passforge(["build"], environment: env)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("this would re-sign every pass with new update tags and push every device"),
            "\(refused.output)")
        #expect(project.snapshot().filter { $0.key.hasPrefix("v1/") }.isEmpty)

        // A published tree with no build yet is a first deploy.
        let dest = TemporaryDirectory("passforge-dest")
        try FileManager.default.createDirectory(atPath: dest.path, withIntermediateDirectories: true)
        let first = try await project.passforge(["build", "--state-from", dest.path], environment: env)
        #expect(first.status == 0, "\(first.output)")
        #expect(try state(project).passes.count == 2)

        // Once published, a fresh output folder starting from that state signs nothing again.
        let published = try await project.passforge(["publish", dest.path], environment: env)
        #expect(published.status == 0, "\(published.output)")
        let before = try state(project)
        try FileManager.default.removeItem(atPath: project.output)
        let again = try await project.passforge(["build", "--state-from", dest.path], environment: env)
        #expect(again.status == 0, "\(again.output)")
        let after = try state(project)
        #expect(after.passes == before.passes)
        #expect(project.snapshot().filter { $0.key.hasPrefix("v1/passes/") }.isEmpty, "no pass was signed again")
    }

    @Test func missingTokenSecretUnderCIIsAnError() async throws {
        let project = ProjectFixture(passCount: 1)
        var env = pki.environment(pki.leaf())
        env["PASSFORGE_TOKEN_SECRET"] = ""
        env["CI"] = "true"
        let result = try await project.passforge(["build", "--initial"], environment: env)
        #expect(result.status == 1)
        #expect(result.stderr.contains("PASSFORGE_TOKEN_SECRET is not set"))
    }

    @Test func inspectChecksPassesAndCatchesTampering() async throws {
        let project = ProjectFixture(passCount: 1)
        try #require(try await project.passforge(["build"], environment: pki.environment(pki.leaf())).status == 0)
        let record = try #require(try state(project).passes.values.first)
        let path = "\(project.output)/\(record.path)"
        let good = try await project.passforge(["inspect", path, "--trusted-root", pki.root])
        #expect(good.status == 0, "\(good.output)")
        #expect(good.stdout.contains("serial:       C-0000"))
        #expect(good.stdout.contains("UID=\(TestPKI.passType)"))
        #expect(good.stdout.contains("chain: trusted"))

        // Tamper with pass.json inside the zip with the real zip tool.
        let work = TemporaryDirectory()
        try await runProcessWithoutBlocking("unzip", ["-q", path, "-d", work.path])
        work.write(
            "pass.json",
            String(decoding: work.read("pass.json")!, as: UTF8.self).replacingOccurrences(
                of: "Member 0", with: "Member X"))
        let tampered = work.file("tampered.pkpass")
        let zip = try await runProcessWithoutBlocking(
            "python3",
            [
                "-c",
                "import sys,zipfile,os; z=zipfile.ZipFile(sys.argv[1],'w'); [z.write(os.path.join(sys.argv[2],f),f) for f in os.listdir(sys.argv[2]) if not f.endswith('.pkpass')]",
                tampered, work.path,
            ])
        try #require(zip.status == 0, "\(zip.output)")
        let bad = try await project.passforge(["inspect", tampered])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("pass.json was changed after signing"))
    }
}

/// The build's ETag rule (the first 128 bits of SHA-256, hex, quoted), restated independently of its code.
enum ParallelPackagerETag {
    static func of(_ bytes: [UInt8]) -> String {
        "\"" + SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined().prefix(32) + "\""
    }
}
