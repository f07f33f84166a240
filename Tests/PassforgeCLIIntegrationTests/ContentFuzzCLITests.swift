import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

/// Issue 14, content fuzzing through the real `passforge build`: hostile
/// and mutated content and templates are refused with `file:line:col`
/// diagnostics only, never a crash, and the output tree of the previous
/// build stays byte for byte as it was.
@Suite struct ContentFuzzCLITests {
    let pki = TestPKI.shared

    /// Seeded byte mutations of the project's own content file that break it.
    static func mutations(of text: String) -> [(name: String, file: String, bytes: [UInt8])] {
        let bytes = Array(text.utf8)
        var state: UInt64 = 0x5EED_0014
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...9 {
            laughs +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", ") + "]\n"
        }
        var cases: [(String, String, [UInt8])] = [
            (
                "invalid UTF-8", "content/cards.yml",
                {
                    var b = bytes
                    b.insert(contentsOf: [0xC3, 0x28], at: next(b.count))
                    return b
                }()
            ),
            (
                "NUL byte", "content/cards.yml",
                {
                    var b = bytes
                    b.insert(0, at: next(b.count))
                    return b
                }()
            ),
            (
                "billion laughs", "content/laughs.yml",
                Array(
                    ("template: card\nserialNumber: L-1\ndata:\n  name: x\n  points: 1\n  bomb:\n    "
                        + laughs.replacingOccurrences(of: "\n", with: "\n    ")).utf8)
            ),
            (
                "deep nesting", "content/deep.yml",
                Array(("template: card\nserialNumber: D-1\ndata: " + String(repeating: "[", count: 20_000)).utf8)
            ),
            (
                "huge serial", "content/huge.yml",
                Array(
                    ("template: card\nserialNumber: " + String(repeating: "A", count: 4 << 20)
                        + "\ndata: {name: a, points: 1}\n").utf8)
            ),
            ("truncated", "content/cards.yml", Array(bytes.prefix(bytes.count / 2)) + Array("\"".utf8)),
            (
                "broken template", "templates/card/pass.json",
                Array(#"{"description": "x", "generic": {"primaryFields": [}"#.utf8)
            ),
            (
                "broken pass.strings", "templates/card/de.lproj/pass.strings",
                Array("\"Name\" = \"Name\";\n\"Points\" = \"Punkte\"\n".utf8)
            ),
        ]
        for index in 0..<4 {
            var mutated = bytes
            let position = next(mutated.count)
            mutated.replaceSubrange(
                position..<min(mutated.count, position + 1 + next(8)),
                with: Array(["[", "{", ": :", "&", "*x", "\t"][index % 6].utf8))
            cases.append(("mutation \(index)", "content/cards.yml", mutated))
        }
        return cases
    }

    @Test func failedBuildsLeaveTheOutputTreeUntouched() async throws {
        let project = ProjectFixture(passCount: 3)
        let environment = pki.environment(pki.leaf())
        try #require(try await project.passforge(["build"], environment: environment).status == 0)
        let before = project.snapshot()
        let original = String(decoding: project.directory.read("content/cards.yml")!, as: UTF8.self)
        for (name, file, bytes) in Self.mutations(of: original) {
            let previous = project.directory.read(file)
            project.directory.write(file, bytes: bytes)
            let result = try await project.passforge(["build"], environment: environment)
            if result.status == 0 {
                // A mutation that happens to stay valid builds; only failed builds are checked here.
                #expect(name.hasPrefix("mutation"), "\(name) was accepted")
            } else {
                #expect(result.status == 1, "\(name): \(result.output)")
                #expect(
                    !result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"),
                    "\(name): \(result.stderr)")
                let diagnostics = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }
                #expect(!diagnostics.isEmpty, "\(name): no error in \(result.stderr)")
                for line in diagnostics {
                    #expect(
                        line.wholeMatch(of: /[^\s:]+:\d+:\d+: error: .+/) != nil,
                        "\(name): not file:line:col: \(line.prefix(300))")
                }
                #expect(project.snapshot() == before, "\(name): the output tree changed")
            }
            if let previous {
                project.directory.write(file, bytes: previous)
            } else {
                try FileManager.default.removeItem(atPath: project.directory.file(file))
            }
        }
    }
}
