import Foundation
import PassModel
import Testing

@testable import PassContent

/// Files that go into a signed pass come from the project only: a template file or a pass image that
/// is a symbolic link (or an `images:` path) leading outside the templates and content folders is
/// refused at its file and line, and none of its bytes is read into the pass or the message.
@Suite struct ProjectBoundaryTests {
    /// templates/, content/ and a secret beside them (outside both), in one scratch folder.
    final class Project {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "passforge-boundary-\(UUID().uuidString)"
        ).path
        var templates: String { "\(root)/templates" }
        var content: String { "\(root)/content" }
        var secret: String { "\(root)/secret.txt" }
        var boundary: ProjectBoundary { ProjectBoundary(folders: [templates, content]) }
        var loader: TemplateLoader { TemplateLoader(directory: templates, boundary: boundary) }

        init() {
            write("secret.txt", "Zsecret-key-material\n")
            write("templates/t/pass.json", #"{"description": "x", "generic": {}}"#)
            write("templates/t/icon.png", "icon")
            write("content/photos/jane.png", "jane")
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        func write(_ relative: String, _ text: String) {
            let full = "\(root)/\(relative)"
            try? FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: full)
            FileManager.default.createFile(atPath: full, contents: Data(text.utf8))
        }

        func link(_ relative: String, to target: String) throws {
            let full = "\(root)/\(relative)"
            try? FileManager.default.removeItem(atPath: full)
            try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: target)
        }

        func render(_ yaml: String) -> Result<RenderedPass, ContentErrors> {
            let file = "\(content)/pass.yml"
            let (definitions, problems) = ContentLoader.definitions(in: file, bytes: Array(yaml.utf8))
            guard problems.isEmpty, let definition = definitions.first else { return .failure(ContentErrors(problems)) }
            let template = try! loader.load("t").get()
            return PassRenderer(configuration: ProjectConfiguration(), boundary: boundary).render(
                definition, template: template)
        }
    }

    func errors<T>(_ result: Result<T, ContentErrors>) -> [ContentDiagnostic] {
        guard case .failure(let errors) = result else { return [] }
        return errors.diagnostics
    }

    @Test func templatePassJSONLinkedOutsideIsRefusedWithoutReadingIt() throws {
        let project = Project()
        try project.link("templates/t/pass.json", to: project.secret)
        let problems = errors(project.loader.load("t"))
        #expect(problems.map(\.rule) == ["template.outside-project"])
        #expect(problems.first?.location.file == "\(project.templates)/t/pass.json")
        // The JSON parser would have said "unexpected character 'Z'".
        #expect(!problems.description.contains("Z"))
        #expect(problems.first?.message.contains("replace the link with a copy") == true)
    }

    @Test func templateImagesAndLocalizationsLinkedOutsideAreRefused() throws {
        let project = Project()
        try project.link("templates/t/logo.png", to: project.secret)
        try FileManager.default.createDirectory(
            atPath: "\(project.templates)/t/de.lproj", withIntermediateDirectories: true)
        try project.link("templates/t/de.lproj/pass.strings", to: project.secret)
        let problems = errors(project.loader.load("t"))
        #expect(problems.map(\.rule) == ["template.outside-project", "template.outside-project"])
        #expect(
            Set(problems.map(\.location.file)) == [
                "\(project.templates)/t/logo.png", "\(project.templates)/t/de.lproj/pass.strings",
            ])
        #expect(!problems.description.contains("Zsecret"))
    }

    @Test func aTemplateFolderLinkedOutsideIsRefused() throws {
        let project = Project()
        project.write("elsewhere/pass.json", #"{"description": "x", "generic": {}}"#)
        try project.link("templates/u", to: "\(project.root)/elsewhere")
        #expect(errors(project.loader.load("u")).map(\.rule) == ["template.outside-project"])
    }

    @Test func linksInsideTheProjectAreFollowed() throws {
        let project = Project()
        // A template sharing another's icon, and a pass image linked into the templates folder.
        project.write("templates/u/pass.json", #"{"description": "u", "generic": {}}"#)
        try project.link("templates/u/icon.png", to: "../t/icon.png")
        let template = try project.loader.load("u").get()
        #expect(template.files.map(\.bytes) == [Array("icon".utf8)])
        try project.link("content/photos/shared.png", to: "\(project.templates)/t/icon.png")
        let rendered = try project.render("template: t\nserialNumber: A\nimages: {thumbnail.png: photos/shared.png}\n")
            .get()
        #expect(rendered.files.first { $0.name == "thumbnail.png" }?.bytes == Array("icon".utf8))
    }

    @Test func passImagesLeavingTheProjectAreRefusedAtTheirLine() throws {
        let project = Project()
        try project.link("content/photos/evil.png", to: project.secret)
        for path in ["../secret.txt", "photos/../../secret.txt", "photos/evil.png"] {
            let problems = errors(project.render("template: t\nserialNumber: A\nimages:\n  thumbnail.png: \(path)\n"))
            #expect(problems.map(\.rule) == ["content.image-outside-project"], "\(path)")
            #expect(problems.first?.location.line == 4)
            #expect(problems.first?.keyPath == JSONPath([.key("images"), .key("thumbnail.png")]))
            #expect(!problems.description.contains("Zsecret"))
        }
        // Inside, through `..`, is fine.
        project.write("content/a/b.yml", "")
        #expect(throws: Never.self) {
            try project.render("template: t\nserialNumber: A\nimages: {thumbnail.png: photos/../photos/jane.png}\n")
                .get()
        }
    }

    @Test func absoluteImagePathsAreRefusedWhenParsed() {
        for path in ["/etc/passwd", "~/.ssh/id_ed25519"] {
            let result = ContentLoader.definitions(
                in: "content/x.yml", bytes: Array("template: t\nserialNumber: A\nimages:\n  icon.png: \(path)\n".utf8))
            #expect(result.definitions.isEmpty)
            #expect(result.problems.map(\.rule) == ["content.image-path"])
            #expect(result.problems.first?.location.line == 4)
        }
    }

    @Test func boundaryResolvesEveryLinkInThePath() throws {
        let project = Project()
        try project.link("content/out", to: project.root)
        #expect(project.boundary.containedPath("\(project.content)/out/secret.txt") == .failure(.outside))
        #expect(
            project.boundary.containedPath("\(project.content)/out/content/photos/jane.png").map { _ in true }
                == .success(true))
        #expect(project.boundary.read("\(project.content)/missing.png") == .failure(.unreadable))
        // A folder named like a root's prefix is not inside it.
        project.write("content-other/x.png", "x")
        #expect(project.boundary.containedPath("\(project.root)/content-other/x.png") == .failure(.outside))
    }

    @Test func namesWithControlOrBidiCharactersAreUnsafe() {
        for name in [
            "content/new\n\n<!--\n.yml", "content/a\u{1B}[31m.yml", "content/\u{202E}lmy.exe", "content/tab\t.yml",
            "content/del\u{7F}.yml",
        ] {
            #expect(ProjectBoundary.hasUnsafeName(name), "\(name.debugDescription)")
        }
        #expect(!ProjectBoundary.hasUnsafeName("content/Zürich 東京/pass-1.yml"))
        #expect(ProjectBoundary.shownName("content/new\n\n<!--\n.yml") == "content/new??<!--?.yml")
    }

    @Test func aConfigurationLinkedOutsideItsFolderIsRefused() throws {
        let project = Project()
        project.write("secret.yml", "Zsecret-key: value\n")
        project.write("p/real.yml", "organizationName: Example\n")
        try FileManager.default.createDirectory(atPath: "\(project.root)/p", withIntermediateDirectories: true)
        try project.link("p/passforge.yml", to: "\(project.root)/secret.yml")
        #expect(throws: ContentErrors.self) { try ProjectConfiguration.load(file: "\(project.root)/p/passforge.yml") }
        do {
            _ = try ProjectConfiguration.load(file: "\(project.root)/p/passforge.yml")
        } catch {
            #expect(error.diagnostics.map(\.rule) == ["config.outside-project"])
            #expect(!error.description.contains("Zsecret"))
        }
        // A link within the folder is read.
        try project.link("p/passforge.yml", to: "real.yml")
        #expect(
            try ProjectConfiguration.load(file: "\(project.root)/p/passforge.yml").defaultValue("organizationName")
                == "Example")
    }
}
