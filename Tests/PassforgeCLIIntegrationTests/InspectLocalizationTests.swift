import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

/// `passforge inspect` shows labels and values as Wallet shows them in one
/// language: English by default, `--language xx` for another.
@Suite struct InspectLocalizationTests {
    let pki = TestPKI.shared

    @Test func labelsAndValuesAreShownLocalized() async throws {
        let project = ProjectFixture(passCount: 1)
        let utf16 = { (text: String) -> [UInt8] in
            [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        }
        project.directory.write(
            "templates/card/en.lproj/pass.strings", bytes: utf16("\"Name\" = \"Name\";\n\"Points\" = \"Points\";\n"))
        project.directory.write(
            "templates/card/de.lproj/pass.strings", bytes: utf16("\"Name\" = \"Name\";\n\"Points\" = \"Punkte\";\n"))
        project.directory.write(
            "templates/card/pt-BR.lproj/pass.strings", "\"Name\" = \"Nome\";\n\"Points\" = \"Pontos\";\n")
        let build = try await project.passforge(["build"], environment: pki.environment(pki.leaf()))
        try #require(build.status == 0, "\(build.output)")
        let path = "output/v1/passes/\(TestPKI.passType)/C-0000"
        let root = ["--trusted-root", pki.root]

        let english = try await project.passforge(["inspect", path] + root)
        #expect(english.status == 0, "\(english.output)")
        #expect(
            english.stdout.contains("language:     en from en.lproj/pass.strings (languages: de, en, pt-BR)"),
            "\(english.stdout)")
        #expect(english.stdout.contains("points — Points: 0"))

        let german = try await project.passforge(["inspect", path, "--language", "de"] + root)
        #expect(german.status == 0, "\(german.output)")
        #expect(german.stdout.contains("points — Punkte: 0"), "\(german.stdout)")
        #expect(german.stdout.contains("name — Name: Member 0"))

        // A language without its region finds the regional folder.
        let portuguese = try await project.passforge(["inspect", path, "--language", "pt"] + root)
        #expect(portuguese.stdout.contains("points — Pontos: 0"), "\(portuguese.stdout)")

        // A language the pass does not have is a note, not a defect: Wallet shows the pass as written.
        let french = try await project.passforge(["inspect", path, "--language", "fr"] + root)
        #expect(french.status == 0, "\(french.output)")
        #expect(
            french.stdout.contains(
                "note: the pass has no fr.lproj/pass.strings, so it is shown as written; its languages: de, en, pt-BR"),
            "\(french.stdout)")
    }
}
