import Foundation
import PassContent
import PassPackage
import TestSupport
import Testing

@testable import PassBuild
@testable import PassModel
@testable import WalletTree

/// The build refuses what `inspect` or a device would refuse (PNG bombs, huge images, a pass over
/// `PackageLimits.maximumTotalSize`), with an error at the image or the pass, and writes nothing.
@Suite struct PackageBoundsBuildTests {
    /// A PNG that is only its signature, header and end: `width`×`height` pixels declared in 57 bytes
    /// (PassModel's CRC-32 is checked on its own in PNGImageInfoTests).
    static func headerOnlyPNG(width: UInt32, height: UInt32) -> [UInt8] {
        func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(value >> $0 & 0xFF) } }
        let header = Array("IHDR".utf8) + bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0]
        let end = Array("IEND".utf8)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bigEndian(13) + header
            + bigEndian(CRC32.checksum(header)) + bigEndian(0) + end + bigEndian(CRC32.checksum(end))
    }

    /// A real `width`×`height` PNG, padded after its end to `size` bytes (readers stop at IEND).
    static func paddedPNG(width: Int, height: Int, size: Int) -> [UInt8] {
        let png = PNGFactory.png(width: width, height: height)
        return png + [UInt8](repeating: 0, count: max(0, size - png.count))
    }

    func build(_ project: ProjectFixture) throws -> BuildFailure? {
        do {
            _ = try PassBuilder(settings: try project.buildSettings(secret: "bounds-test-token-secret-0123456789"))
                .build()
            return nil
        } catch let failure as BuildFailure {
            return failure
        }
    }

    @Test func aPNGBombIsAnErrorAtTheImageAndNothingIsWritten() throws {
        let project = ProjectFixture(passCount: 2)
        project.directory.write("templates/card/logo@3x.png", bytes: Self.headerOnlyPNG(width: 50_000, height: 50_000))
        let failure = try #require(try build(project))
        let errors = failure.diagnostics.filter(\.isError)
        // One for each pass of the template, as for any template image.
        #expect(errors.map(\.rule) == ["image.dimensions", "image.dimensions"], "\(failure)")
        #expect(errors.first?.location.file == project.directory.file("templates/card/logo@3x.png"))
        #expect(errors.first?.message.contains("2048") == true)
        #expect(project.snapshot().keys.filter { $0.hasPrefix("v1/") }.isEmpty)
    }

    @Test func aSixtyMegabyteIconIsAnErrorNotAWarning() throws {
        let project = ProjectFixture(passCount: 1)
        project.directory.write("templates/card/icon.png", bytes: Self.paddedPNG(width: 29, height: 29, size: 60 << 20))
        let failure = try #require(try build(project))
        let errors = failure.diagnostics.filter(\.isError)
        #expect(errors.map(\.rule) == ["image.fileSize"], "\(failure)")
        #expect(errors.first?.location.file == project.directory.file("templates/card/icon.png"))
        #expect(errors.first?.message.contains("60 MB") == true && errors.first?.message.contains("16 MB") == true)
    }

    @Test func aPassOverThePackageBoundIsRefusedAtItsDefinition() throws {
        let project = ProjectFixture(passCount: 1)
        // Five images each under the per-image bound, 70 MB in all.
        let size = 14 << 20
        #expect(size <= ImageLimits.maximumFileSize && 5 * size > PackageLimits.maximumTotalSize)
        for (name, side) in [
            ("icon@2x.png", 58), ("icon@3x.png", 87), ("logo@2x.png", 200), ("thumbnail.png", 90),
            ("thumbnail@2x.png", 180),
        ] {
            project.directory.write(
                "templates/card/\(name)",
                bytes: Self.paddedPNG(width: side, height: name.hasPrefix("logo") ? 80 : side, size: size))
        }
        let failure = try #require(try build(project))
        let errors = failure.diagnostics.filter(\.isError)
        #expect(errors.map(\.rule) == ["package.size"], "\(failure)")
        #expect(errors.first?.location.file == project.directory.file("content/cards.yml"))
        #expect(errors.first?.location.line == 4)
        #expect(errors.first?.message.contains("64 MB") == true, "\(failure)")
        #expect(project.snapshot().keys.filter { $0.hasPrefix("v1/") }.isEmpty)

        // Under the bound, the same project builds.
        for name in ["icon@3x.png", "logo@2x.png", "thumbnail@2x.png"] {
            try FileManager.default.removeItem(atPath: project.directory.file("templates/card/\(name)"))
        }
        #expect(try build(project) == nil)
    }
}
