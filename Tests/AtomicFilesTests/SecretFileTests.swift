import Foundation
import Testing

@testable import AtomicFiles

/// SecretFile: the warning for a secret file others can read, once per file.
@Suite("SecretFile: a key or secret readable by group or others is named once, with chmod 600")
struct SecretFileTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "secret-file-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    }

    private func file(_ name: String, mode: mode_t) throws -> String {
        let path = "\(folder)/\(name)"
        try Data("secret".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test func onlyTheOwnerMayReadAndEachFileIsNamedOnce() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let owned = try file("owned.pem", mode: 0o600)
        #expect(SecretFile.exposureWarning(owned, holding: "a signing key") == nil)
        #expect(
            SecretFile.exposureWarning(try file("writable-by-group.pem", mode: 0o620), holding: "a key") == nil,
            "writing is not reading: not this warning's business")

        let group = try file("group.p8", mode: 0o640)
        #expect(
            SecretFile.exposureWarning(group, holding: "the DeviceCheck key") == """
                warning: \(group) holds the DeviceCheck key and its group can read it (mode 0640); \
                make it readable by its owner alone: chmod 600 \(group)
                """)
        #expect(SecretFile.exposureWarning(group, holding: "the DeviceCheck key") == nil, "once per file")
        let link = "\(folder)/another-name.p8"
        try FileManager.default.linkItem(atPath: group, toPath: link)
        #expect(SecretFile.exposureWarning(link, holding: "the DeviceCheck key") == nil, "the same file, another name")

        let everyone = try file("token-secret", mode: 0o604)
        let warning = SecretFile.exposureWarning(everyone, holding: "the token secret")
        #expect(warning?.contains("every user of this machine can read it (mode 0604)") == true, "\(warning ?? "none")")
        #expect(SecretFile.exposureWarning("\(folder)/missing", holding: "a key") == nil)
        #expect(SecretFile.exposureWarning(folder, holding: "a key") == nil, "a folder is no key file")
    }

    @Test func thePathIsOneShellWordToPaste() {
        #expect(SecretFile.shellWord("/etc/passforge/pass.p12") == "/etc/passforge/pass.p12")
        #expect(SecretFile.shellWord("certs/pass key.pem") == "'certs/pass key.pem'")
        #expect(SecretFile.shellWord("it's.pem") == #"'it'\''s.pem'"#)
        #expect(SecretFile.shellWord("-key.pem") == "./-key.pem")
        #expect(SecretFile.shellWord("a\u{1B}[31m\u{202E}.pem") == "'a?[31m?.pem'")
    }
}
