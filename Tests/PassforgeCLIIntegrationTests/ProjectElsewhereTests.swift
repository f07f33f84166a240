import Foundation
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport
import Testing

/// Every command run from another folder with `--config /elsewhere/passforge.yml` works on that project:
/// its defaults (output/, state/registrations.sqlite, preview/, .passforge/) are the project's, relative to
/// its root (DESIGN.md's command line), never the working directory's. The real passforge binary runs
/// in a folder of its own that must stay empty.
@Suite struct ProjectElsewhereTests {
    let pki = TestPKI.shared

    @Test func everyCommandResolvesItsDefaultsFromTheProjectRoot() async throws {
        let project = ProjectFixture(passCount: 2)
        let elsewhere = TemporaryDirectory("passforge-elsewhere")
        let config = project.directory.file("passforge.yml")
        let environment = pki.environment(pki.leaf())
        func passforge(_ arguments: [String]) async throws -> ProcessResult {
            var environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            environment["CI"] = nil
            environment[StoreLocation.environmentVariable] = nil
            return try await runProcessWithoutBlocking(
                passforgeExecutable(), arguments, directory: elsewhere.path,
                environment: environment)
        }

        let build = try await passforge(["build", "--config", config])
        #expect(build.status == 0 && build.stdout.contains("built 2"), "\(build.output)")
        #expect(FileManager.default.fileExists(atPath: "\(project.output)/.passforge/state.json"))
        let validate = try await passforge(["validate", "--config", config])
        #expect(validate.status == 0, "\(validate.output)")

        // The project's registration store, where `serve --config` (from anywhere) keeps it.
        // As passforge spells them: the temporary folder's path may hold a doubled slash.
        let storePath = (project.directory.file("state/registrations.sqlite") as NSString).standardizingPath
        let outputPath = (project.output as NSString).standardizingPath
        let store = try SQLiteRegistrationStore(path: storePath)
        _ = try await store.register(
            device: "device0001", pushToken: String(repeating: "ab", count: 32),
            passTypeIdentifier: TestPKI.passType, serialNumber: "C-0000")

        let offers = try await passforge(["offers", "--config", config])
        #expect(offers.status == 0 && offers.stdout.contains(storePath), "\(offers.output)")
        let stats = try await passforge(["stats", "--config", config, "--json"])
        #expect(stats.status == 0 && !stats.stderr.contains("no registration store"), "\(stats.output)")
        let push = try await passforge(["push", "--config", config, "--dry-run"])
        #expect(push.status == 0 && push.stdout.contains("1 push would be sent"), "\(push.output)")
        let links = try await passforge(["links", "--config", config])
        #expect(links.status == 0 && links.stdout.contains("C-0001"), "\(links.output)")
        let pass = "\(project.output)/v1/passes/\(TestPKI.passType)/C-0000"
        let inspect = try await passforge(["inspect", pass])
        #expect(inspect.status == 0, "\(inspect.output)")
        let preview = try await passforge(["preview", "--config", config])
        #expect(preview.status == 0, "\(preview.output)")
        #expect(
            FileManager.default.fileExists(atPath: project.directory.file("preview/index.html")), "\(preview.output)")
        let destination = TemporaryDirectory("passforge-elsewhere-published")
        let publish = try await passforge(["publish", "--config", config, destination.path])
        #expect(publish.status == 0, "\(publish.output)")
        #expect(FileManager.default.fileExists(atPath: destination.file(".passforge/state.json")), "\(publish.output)")

        // diff reads the project's git repository, not the working directory's (which has none).
        for arguments in [
            ["init", "-q"], ["add", "-A"],
            ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"],
        ] {
            let git = try await runProcessWithoutBlocking("git", arguments, directory: project.root)
            #expect(git.status == 0, "git \(arguments): \(git.output)")
        }
        project.writeList(count: 3)
        let diff = try await passforge(["diff", "--config", config, "HEAD"])
        #expect(diff.status == 0 && diff.stdout.contains("C-0002"), "\(diff.output)")

        // serve's defaults: the project's output tree and store, whatever the working directory.
        var serveEnvironment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        serveEnvironment[StoreLocation.environmentVariable] = nil
        let serve = try BackgroundProcess(
            passforgeExecutable(), ["serve", "--config", config, "--port", "0"],
            directory: elsewhere.path, environment: serveEnvironment)
        let listening = await serve.contains("stop with Ctrl-C")
        _ = await serve.stop()
        #expect(
            listening && serve.stdout.contains("output tree: \(outputPath)")
                && serve.stdout.contains("registrations: SQLite file \(storePath)"), "\(serve.output)")

        // Nothing landed in the working directory: no output/, state/, preview/ or .passforge/ of its own.
        let stray = (try? FileManager.default.contentsOfDirectory(atPath: elsewhere.path)) ?? []
        #expect(stray.isEmpty, "passforge wrote \(stray) into the working directory")
    }
}
