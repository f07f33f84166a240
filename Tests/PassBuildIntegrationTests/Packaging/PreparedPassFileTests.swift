import Foundation
import PassPackage
import TestSupport
import Testing

/// Files prepared once (as a build does for a template's files) give the
/// same pass as files packaged one by one, and real zip tools read it.
@Suite("Prepared pass files and the Swift zip writer")
struct PreparedPassFileTests {
    let pki = TestPKI.withSigningFormats()

    @Test func preparedFilesGiveTheSameBytesAsPlainOnes() async throws {
        let signer = try pki.identity().makeSigner()
        let signingTime = Date(timeIntervalSince1970: 1_780_000_000)
        var files = sampleFiles()
        let passJSON = files.removeValue(forKey: "pass.json")!
        let prepared = try files.map { try PreparedPassFile(name: $0.key, bytes: $0.value) }
        let packager = PassPackager(signer: signer)
        let plain = try packager.makePKPass(files: sampleFiles(), signingTime: signingTime)
        // The same prepared files in another order, as a template cache hands them out.
        let fromPrepared = try packager.makePKPass(
            passJSON: passJSON, files: prepared.reversed(), signingTime: signingTime)
        #expect(fromPrepared == plain)
        #expect(
            try ZipArchive.read(fromPrepared).map(\.name)
                == ["pass.json", "en.lproj/pass.strings", "icon.png", "icon@2x.png", "manifest.json", "signature"])

        let directory = try makeTemporaryDirectory("prepared")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(fromPrepared, to: directory + "/pass.pkpass")
        #expect(try await run("unzip", ["-t", "pass.pkpass"], in: directory).output.contains("No errors detected"))
        let listing = try await run("unzip", ["-v", "pass.pkpass"], in: directory).output
        // A pass.json below `PassPackager.minimumDeflatedSize` is stored (deflating it per pass costs more than it saves).
        #expect(listing.split(separator: "\n").first { $0.hasSuffix(" pass.json") }?.contains("Stored") == true)
        #expect(listing.split(separator: "\n").first { $0.hasSuffix(" icon.png") }?.contains("Stored") == true)
    }

    @Test func preparedNamesAreCheckedAndUnique() async throws {
        #expect(throws: PassPackageError.self) { try PreparedPassFile(name: "pass.json", bytes: []) }
        #expect(throws: PassPackageError.self) { try PreparedPassFile(name: "signature", bytes: []) }
        #expect(throws: PassPackageError.self) { try PreparedPassFile(name: "a/b/c.png", bytes: []) }
        let icon = try PreparedPassFile(name: "icon.png", bytes: [1, 2, 3])
        #expect(throws: PassPackageError.self) {
            try PassPackager(signer: pki.identity().makeSigner()).makePKPass(
                passJSON: Array("{}".utf8), files: [icon, icon], signingTime: Date())
        }
    }

    @Test func incompressibleEntriesAreStoredAndEmptyOnesWork() async throws {
        let random = (0..<2_000).map { _ in UInt8.random(in: 0...255) }
        let archive = try ZipArchive.make(
            [ZipEntry(name: "random.bin", bytes: random), ZipEntry(name: "empty", bytes: [])],
            modificationDate: Date(timeIntervalSince1970: 0))
        #expect(try ZipArchive.read(archive).map(\.bytes) == [random, []])
        let directory = try makeTemporaryDirectory("stored")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(archive, to: directory + "/a.zip")
        let listing = try await run("unzip", ["-v", "a.zip"], in: directory).output
        #expect(listing.split(separator: "\n").first { $0.hasSuffix(" random.bin") }?.contains("Stored") == true)
        // Before 1980, which MS-DOS dates cannot hold: clamped to 1980-01-01.
        #expect(listing.contains("1980-01-01") || listing.contains("01-01-1980"))
        #expect(try await run("unzip", ["-t", "a.zip"], in: directory).output.contains("No errors detected"))
    }
}
