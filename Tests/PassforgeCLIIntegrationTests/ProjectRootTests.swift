import Foundation
import PassBuild
import PassContent
import TestSupport
import Testing

/// One spelling per project path, relative to the project's root (`ProjectRoot`).
@Suite("ProjectRoot: the project's folders spelled one way, relative to its root")
struct ProjectRootTests {
    let pki = TestPKI.shared

    @Test("--content ./content, content/ and the absolute path share the build state: the second build signs nothing")
    func contentSpellingsShareIncrementalState() async throws {
        let project = ProjectFixture(passCount: 3)
        let env = pki.environment(pki.leaf())
        let first = try await project.passforge(["build", "--content", "./content"], environment: env)
        #expect(first.status == 0 && first.stdout.contains("built 3, unchanged 0, removed 0"), "\(first.output)")
        for spelling in ["content", "content/", "\(project.root)/content", "./templates/../content"] {
            let again = try await project.passforge(["build", "--content", spelling], environment: env)
            #expect(
                again.status == 0 && again.stdout.contains("built 0, unchanged 3, removed 0"),
                "--content \(spelling): \(again.output)")
        }
        // The state names each content file once, as `content/…`.
        let state = try String(contentsOfFile: project.directory.file("output/.passforge/state.json"), encoding: .utf8)
        #expect(state.contains("\"content/cards.yml\"") && !state.contains("./content"), "\(state.prefix(400))")
    }

    @Test("a path typed relative to the working directory, or absolute, is spelled relative to the root when below it")
    func spellings() {
        let root = ProjectRoot(path: ".", workingDirectory: "/work/site/")
        #expect(root.path == "/work/site")
        #expect(root.spelling(of: "./content/", default: "content") == "content")
        #expect(root.spelling(of: "/work/site/content", default: "content") == "content")
        #expect(root.spelling(of: "a/../content//b/.", default: "content") == "content/b")
        #expect(root.spelling(of: nil, default: "templates") == "templates")
        #expect(root.spelling(of: "../shared/templates", default: "templates") == "/work/shared/templates")
        #expect(root.spelling(of: ".", default: "content") == ".")

        // --config elsewhere: the root is its folder, and paths below it are absolute (they are read from the working directory).
        let elsewhere = ProjectRoot.locate(configurationFile: "site/passforge.yml", workingDirectory: "/work")
        #expect(elsewhere.path == "/work/site")
        #expect(elsewhere.spelling(of: nil, default: "content") == "/work/site/content")
        #expect(elsewhere.spelling(of: "site/content", default: "content") == "/work/site/content")
        #expect(elsewhere.relativeSpelling(of: "/work/site/content/a.yml") == "content/a.yml")
        #expect(elsewhere.relativeSpelling(of: "/work/other/a.yml") == "/work/other/a.yml")
        #expect(elsewhere.relativeSpelling(inText: "see /work/site/templates/x") == "see templates/x")

        // A snapshot of the project (diff): the same path below it; a path outside the project stays.
        #expect(root.placing("content", under: "/tmp/snap") == "/tmp/snap/content")
        #expect(elsewhere.placing("/work/site/templates", under: "/tmp/snap") == "/tmp/snap/templates")
        #expect(root.placing("/elsewhere/templates", under: "/tmp/snap") == "/elsewhere/templates")
        #expect(ProjectRoot.normalized("/a/../../b") == "/b")
        #expect(ProjectRoot.normalized("../a/./b/..") == "../a")
    }
}
