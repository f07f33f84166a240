import Foundation

/// A small passforge project on disk: passforge.yml, one template with
/// images, and content files — the shape an editor commits.
public final class ProjectFixture: Sendable {
    public let directory: TemporaryDirectory
    public var root: String { directory.path }
    public var output: String { directory.file("output") }

    /// - Parameter base: the folder to make the project in; the system's temporary directory when nil.
    public init(passCount: Int = 3, under base: String? = nil) {
        directory = TemporaryDirectory("passforge-project", under: base)
        directory.write(
            "passforge.yml",
            """
            passTypeIdentifier: \(TestPKI.passType)
            teamIdentifier: \(TestPKI.team)
            organizationName: passforge tests
            webServiceURL: https://passes.example.com/
            """)
        directory.write(
            "templates/card/pass.json",
            """
            {
              "description": "Test card for {{ name }}",
              "backgroundColor": "rgb(20, 40, 60)",
              "generic": {
                "primaryFields": [{"key": "name", "label": "Name", "value": "{{ name }}"}],
                "secondaryFields": [{"key": "points", "label": "Points", "value": "{{ points }}"}]
              },
              "barcodes": [{"format": "PKBarcodeFormatQR", "message": "{{ serialNumber }}", "messageEncoding": "iso-8859-1"}]
            }
            """)
        directory.write("templates/card/icon.png", bytes: PNGFactory.png(width: 29, height: 29))
        directory.write("templates/card/icon@2x.png", bytes: PNGFactory.png(width: 58, height: 58))
        directory.write("templates/card/logo.png", bytes: PNGFactory.png(width: 100, height: 40))
        if passCount > 0 { writeList(count: passCount) }
    }

    /// `content/cards.yml` with `count` passes C-0000 … of the card template.
    public func writeList(count: Int, points: (Int) -> Int = { $0 }, name: String = "cards.yml") {
        var yaml = "template: card\ndefaults: { data: { points: 0 } }\npasses:\n"
        for i in 0..<count {
            yaml +=
                "  - serialNumber: C-\(String(format: "%04d", i))\n    data: { name: \"Member \(i)\", points: \(points(i)) }\n"
        }
        directory.write("content/\(name)", yaml)
    }

    /// Every file under `output/`, with its bytes: to show a tree is untouched.
    public func snapshot(_ folder: String? = nil) -> [String: [UInt8]] {
        let base = folder ?? output
        var files: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: base)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = "\(base)/\(relative)"
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                !relative.hasSuffix("build.lock")
            {
                files[relative] = FileManager.default.contents(atPath: full).map { Array($0) }
            }
        }
        return files
    }

    /// Runs the real `passforge` executable in the project folder.
    @discardableResult
    public func passforge(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessResult {
        try runProcess(passforgeExecutable(), arguments, directory: root, environment: Self.cliEnvironment(extra))
    }

    /// `passforge` for async tests: suspends until the run ends, holding none of the test runner's threads.
    @discardableResult
    public func passforge(_ arguments: [String], environment extra: [String: String] = [:]) async throws
        -> ProcessResult
    {
        try await runProcessWithoutBlocking(
            passforgeExecutable(), arguments, directory: root,
            environment: Self.cliEnvironment(extra))
    }

    /// The tests' own environment without CI, with `extra` on top.
    private static func cliEnvironment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CI"] = nil
        for (key, value) in extra { environment[key] = value }
        return environment
    }
}
