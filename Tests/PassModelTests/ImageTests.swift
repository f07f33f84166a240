import Testing

@testable import PassModel

/// A minimal PNG: signature, IHDR with a correct CRC, and IEND. The CRC is
/// computed here independently of PassModel's, so a broken checksum in
/// either shows up.
func makePNG(width: UInt32, height: UInt32, corruptCRC: Bool = false) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func crc(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = (c >> 1) ^ (c & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~c
    }
    let ihdr = Array("IHDR".utf8) + be(width) + be(height) + [8, 6, 0, 0, 0]
    let iend = Array("IEND".utf8)
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        + be(13) + ihdr + be(crc(ihdr) ^ (corruptCRC ? 1 : 0))
        + be(0) + iend + be(crc(iend))
}

@Suite struct PNGImageInfoTests {
    @Test func readsWidthAndHeight() {
        let info = PNGImageInfo.parse(makePNG(width: 750, height: 196))
        #expect(info?.width == 750)
        #expect(info?.height == 196)
        #expect(info?.bitDepth == 8)
        #expect(info?.colorType == 6)
    }

    @Test func readsARealPNGProducedByATool() {
        // A 1×1 RGBA PNG written by Python's zlib/struct PNG writer.
        let bytes: [UInt8] = [
            0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
            0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
            0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
            0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
        ]
        #expect(PNGImageInfo.parse(bytes) == PNGImageInfo(width: 1, height: 1, bitDepth: 8, colorType: 6))
    }

    @Test(arguments: [
        ([UInt8](), PNGImageInfo.ParseError.tooShort),
        ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 0x4A, 0x46, 0x49, 0x46], .notPNGSignature),  // JPEG
        (Array("<svg xmlns='http://www.w3.org/2000/svg'></svg>".utf8), .notPNGSignature),
        (Array(makePNG(width: 1, height: 1).prefix(20)), .missingHeader),
        (makePNG(width: 1, height: 1, corruptCRC: true), .headerChecksumMismatch),
        (makePNG(width: 0, height: 10), .zeroSize),
    ])
    func rejectsWhatIsNotAPNG(bytes: [UInt8], expected: PNGImageInfo.ParseError) {
        #expect(throws: expected) { try PNGImageInfo(bytes: bytes) }
        #expect(PNGImageInfo.parse(bytes) == nil)
    }

    @Test func headerChunkMustComeFirst() {
        var bytes = makePNG(width: 1, height: 1)
        bytes.replaceSubrange(12..<16, with: Array("IDAT".utf8))
        #expect(throws: PNGImageInfo.ParseError.missingHeader) { try PNGImageInfo(bytes: bytes) }
    }
}

@Suite struct ImageNameTests {
    @Test func parsesScaleAndLocalization() {
        let name = PassImageName(path: "pt-BR.lproj/strip@3x.png")
        #expect(name?.localization == "pt-BR")
        #expect(name?.baseName == "strip")
        #expect(name?.kind == .strip)
        #expect(name?.scale == 3)
        #expect(name?.fileName == "strip@3x.png")
        #expect(PassImageName(path: "icon.png")?.scale == 1)
        #expect(PassImageName(path: "icon.png")?.localization == nil)
        #expect(PassImageName(path: "banner@2x.png")?.kind == nil)
    }

    @Test(arguments: [
        "logo.jpg", "logo@4x.png", "logo@1x.png", "Logo.PNG", "a/b/logo.png", "images/logo.png", ".lproj/logo.png",
        "@2x.png",
    ])
    func rejectsMalformedNames(path: String) {
        #expect(PassImageName(path: path) == nil)
    }
}

@Suite struct ImageRuleTests {
    func png(_ width: UInt32, _ height: UInt32) -> [UInt8] { makePNG(width: width, height: height) }

    var icons: [String: [UInt8]] {
        ["icon.png": png(29, 29), "icon@2x.png": png(58, 58), "icon@3x.png": png(114, 114)]
    }

    func check(_ files: [String: [UInt8]], _ style: PassStyle) -> [String] {
        problems(ImageRules.validate(files: files, style: style))
    }

    @Test func correctImagesForEachStyle() {
        #expect(
            check(
                icons.merging(["logo.png": png(160, 50), "logo@2x.png": png(200, 60), "footer@2x.png": png(572, 30)]) {
                    $1
                }, .boardingPass) == [])
        #expect(
            check(icons.merging(["strip.png": png(375, 144), "strip@3x.png": png(1125, 432)]) { $1 }, .coupon) == [])
        #expect(check(icons.merging(["strip@2x.png": png(750, 288)]) { $1 }, .storeCard) == [])
        #expect(check(icons.merging(["strip@2x.png": png(750, 196)]) { $1 }, .eventTicket) == [])
        #expect(
            check(
                icons.merging(["background@2x.png": png(360, 440), "thumbnail@2x.png": png(180, 180)]) { $1 },
                .eventTicket) == [])
        #expect(check(icons.merging(["thumbnail.png": png(90, 90)]) { $1 }, .generic) == [])
    }

    @Test func aPNGBombIsRefusedFromItsHeader() {
        // 50000×50000 pixels in 57 bytes: 10 GB to decode on a phone. An error, not the size warning.
        let diagnostics = ImageRules.validate(
            files: icons.merging(["strip@3x.png": png(50_000, 50_000)]) { $1 }, style: .coupon)
        #expect(problems(diagnostics) == ["error image.dimensions @ strip@3x.png"])
        #expect(diagnostics[0].message.contains("50000×50000") && diagnostics[0].message.contains("2048"))
        // One side too long is enough; the largest image Apple describes (a poster background at @3x) is fine.
        #expect(
            check(icons.merging(["strip@3x.png": png(1125, 2049)]) { $1 }, .coupon) == [
                "error image.dimensions @ strip@3x.png"
            ])
        #expect(check(icons.merging(["background@3x.png": png(1035, 1515)]) { $1 }, .eventTicket) == [])
        #expect(max(345, 505) * 3 < ImageLimits.maximumPixelSide)
    }

    @Test func anImageFileLargerThanTheBoundIsRefused() {
        // A right-sized icon padded to 60 MB (PNG readers ignore what follows IEND).
        var large = png(29, 29)
        large += [UInt8](repeating: 0, count: 60 << 20)
        let diagnostics = ImageRules.validate(files: icons.merging(["icon.png": large]) { $1 }, style: .generic)
        #expect(problems(diagnostics) == ["error image.fileSize @ icon.png"])
        #expect(diagnostics[0].message.contains("60 MB") && diagnostics[0].message.contains("16 MB"))
        var atTheBound = png(29, 29)
        atTheBound += [UInt8](repeating: 0, count: ImageLimits.maximumFileSize - atTheBound.count)
        #expect(check(icons.merging(["icon.png": atTheBound]) { $1 }, .generic) == [])
    }

    @Test func iOS18IconSizeIsAccepted() {
        #expect(
            check(["icon.png": png(38, 38), "icon@2x.png": png(76, 76), "icon@3x.png": png(114, 114)], .generic) == [])
    }

    @Test func notAPNGIsAnError() {
        let diagnostics = ImageRules.validate(
            files: icons.merging(["logo.png": [0xFF, 0xD8, 0xFF, 0xE0, 0, 0, 0, 0, 0, 0]]) { $1 }, style: .coupon)
        #expect(problems(diagnostics) == ["error image.notPNG @ logo.png"])
        #expect(diagnostics[0].message.contains("JPEG"))
    }

    @Test func imageTheStyleDoesNotShowIsAnError() {
        let diagnostics = ImageRules.validate(files: icons.merging(["footer.png": png(286, 15)]) { $1 }, style: .coupon)
        #expect(problems(diagnostics) == ["error image.notAllowed @ footer.png"])
        #expect(diagnostics[0].message.contains("logo, icon, strip"))
        #expect(
            check(icons.merging(["strip@2x.png": png(750, 246)]) { $1 }, .boardingPass) == [
                "error image.notAllowed @ strip@2x.png"
            ])
        #expect(
            check(icons.merging(["thumbnail.png": png(90, 90)]) { $1 }, .storeCard) == [
                "error image.notAllowed @ thumbnail.png"
            ])
        #expect(
            check(icons.merging(["background.png": png(180, 220)]) { $1 }, .generic) == [
                "error image.notAllowed @ background.png"
            ])
    }

    @Test func unknownImageNameIsAnError() {
        #expect(
            check(icons.merging(["banner.png": png(10, 10)]) { $1 }, .generic) == [
                "error image.notAllowed @ banner.png"
            ])
    }

    @Test(arguments: ["logo.jpg", "logo@4x.png", "img/logo.png"])
    func malformedNameIsAnError(path: String) {
        #expect(check(icons.merging([path: png(10, 10)]) { $1 }, .generic) == ["error image.name @ \(path)"])
    }

    @Test func missingIconIsAnError() {
        #expect(check(["logo.png": png(100, 50)], .generic) == ["error image.iconMissing @ icon.png"])
        let onlyRetina = ImageRules.validate(files: ["icon@2x.png": png(58, 58)], style: .generic)
        #expect(problems(onlyRetina) == ["error image.iconMissing @ icon.png"])
        #expect(onlyRetina[0].message.contains("do not replace icon.png"))
    }

    @Test func localizedIconInEveryLanguageCountsAsTheIcon() {
        var files: [String: [UInt8]] = [:]
        for language in ["en", "de"] {
            files["\(language).lproj/icon.png"] = png(29, 29)
            files["\(language).lproj/icon@2x.png"] = png(58, 58)
            files["\(language).lproj/icon@3x.png"] = png(87, 87)
        }
        #expect(check(files, .generic) == [])
        #expect(
            check(["en.lproj/icon.png": png(29, 29), "de.lproj/logo.png": png(100, 50)], .generic) == [
                "error image.iconMissing @ icon.png",
                "warning image.iconScale @ en.lproj/icon@2x.png",
                "warning image.iconScale @ en.lproj/icon@3x.png",
            ])
    }

    @Test func wrongSizeIsAWarning() {
        let diagnostics = ImageRules.validate(
            files: icons.merging(["strip@2x.png": png(750, 246)]) { $1 }, style: .eventTicket)
        #expect(problems(diagnostics) == ["warning image.size @ strip@2x.png"])
        #expect(diagnostics[0].message.contains("750×246"))
        #expect(diagnostics[0].message.contains("750×196"))
        #expect(
            check(["icon.png": png(29, 29), "icon@2x.png": png(58, 58), "icon@3x.png": png(58, 58)], .generic) == [
                "warning image.size @ icon@3x.png"
            ])
        #expect(
            check(icons.merging(["thumbnail@2x.png": png(90, 90)]) { $1 }, .generic) == [
                "warning image.size @ thumbnail@2x.png"
            ])
        #expect(
            check(icons.merging(["footer.png": png(286, 30)]) { $1 }, .boardingPass) == [
                "warning image.size @ footer.png"
            ])
        #expect(
            check(icons.merging(["background.png": png(200, 220)]) { $1 }, .eventTicket) == [
                "warning image.size @ background.png"
            ])
    }

    @Test func stripSizeDependsOnStyle() {
        #expect(check(icons.merging(["strip.png": png(375, 98)]) { $1 }, .coupon) == ["warning image.size @ strip.png"])
        #expect(
            check(icons.merging(["strip.png": png(375, 144)]) { $1 }, .eventTicket) == [
                "warning image.size @ strip.png"
            ])
    }

    @Test func logoMayBeSmallerButNotLarger() {
        #expect(check(icons.merging(["logo@2x.png": png(100, 100)]) { $1 }, .generic) == [])
        #expect(
            check(icons.merging(["logo@2x.png": png(321, 100)]) { $1 }, .generic) == [
                "warning image.size @ logo@2x.png"
            ])
        #expect(check(icons.merging(["logo.png": png(160, 51)]) { $1 }, .generic) == ["warning image.size @ logo.png"])
    }

    @Test func eventTicketStripCannotBeCombinedWithBackgroundOrThumbnail() {
        #expect(
            check(icons.merging(["strip.png": png(375, 98), "background.png": png(180, 220)]) { $1 }, .eventTicket)
                == ["error image.stripCombination @ background.png"])
        #expect(
            check(
                icons.merging(["strip@2x.png": png(750, 196), "thumbnail@2x.png": png(180, 180)]) { $1 }, .eventTicket)
                == ["error image.stripCombination @ thumbnail@2x.png"])
    }

    @Test func imageBothTopLevelAndLocalizedIsAnError() {
        let files = icons.merging([
            "logo.png": png(160, 50), "fr.lproj/logo@2x.png": png(320, 100), "fr.lproj/strip.png": png(375, 144),
        ]) { $1 }
        #expect(check(files, .coupon) == ["error image.localizedDuplicate @ fr.lproj/logo@2x.png"])
    }

    @Test func nonImageFilesAreSkipped() {
        let files = icons.merging([
            "pass.json": [0x7B, 0x7D], "en.lproj/pass.strings": [0xFF, 0xFE], "manifest.json": [], "signature": [1],
        ]) { $1 }
        #expect(check(files, .generic) == [])
    }

    @Test func validateWithHeadersAlreadyRead() {
        let images: [String: PNGImageInfo?] = [
            "icon.png": PNGImageInfo(width: 29, height: 29), "logo.png": nil,
            "strip.png": PNGImageInfo(width: 1, height: 1),
        ]
        #expect(
            problems(ImageRules.validate(images: images, style: .storeCard)) == [
                "error image.notPNG @ logo.png",
                "warning image.size @ strip.png",
                "warning image.iconScale @ icon@2x.png",
                "warning image.iconScale @ icon@3x.png",
            ])
    }
}

@Suite struct PassStyleTests {
    @Test func expectedSizes() {
        #expect(PassStyle.eventTicket.expectedSize(of: .strip) == .exactly([PointSize(width: 375, height: 98)]))
        #expect(PassStyle.coupon.expectedSize(of: .strip) == .exactly([PointSize(width: 375, height: 144)]))
        #expect(PassStyle.storeCard.expectedSize(of: .strip) == .exactly([PointSize(width: 375, height: 144)]))
        #expect(PassStyle.generic.expectedSize(of: .strip) == nil)
        #expect(PassStyle.boardingPass.expectedSize(of: .footer) == .atMost(PointSize(width: 286, height: 15)))
        #expect(PassStyle.generic.expectedSize(of: .thumbnail) == .exactly([PointSize(width: 90, height: 90)]))
        #expect(
            PassStyle.eventTicket.expectedSize(of: .background)
                == .exactly([PointSize(width: 180, height: 220), PointSize(width: 345, height: 505)]))
        #expect(PassStyle.posterGeneric.expectedSize(of: .background) == .exactly([PointSize(width: 345, height: 505)]))
        #expect(PassStyle.eventTicket.expectedSize(of: .artwork) == .exactly([PointSize(width: 358, height: 448)]))
        #expect(PassStyle.posterGeneric.expectedSize(of: .primaryLogo) == .atMost(PointSize(width: 126, height: 30)))
        #expect(PassStyle.posterGeneric.expectedSize(of: .secondaryLogo) == .atMost(PointSize(width: 135, height: 12)))
        #expect(PassStyle.generic.expectedSize(of: .artwork) == nil)
        #expect(PassStyle.coupon.expectedSize(of: .logo) == .atMost(PointSize(width: 160, height: 50)))
        #expect(PassStyle.coupon.expectedSize(of: .icon)?.accepts(PointSize(width: 87, height: 87), scale: 3) == true)
    }

    @Test func allowedImages() {
        #expect(PassStyle.boardingPass.allowedImages == [.logo, .icon, .footer])
        #expect(PassStyle.coupon.allowedImages == [.logo, .icon, .strip])
        #expect(
            PassStyle.eventTicket.allowedImages == [
                .logo, .icon, .strip, .background, .thumbnail, .artwork, .primaryLogo, .secondaryLogo,
            ])
        #expect(
            PassStyle.posterGeneric.allowedImages == [
                .logo, .icon, .background, .artwork, .primaryLogo, .secondaryLogo,
            ])
        #expect(PassStyle.generic.allowedImages == [.logo, .icon, .thumbnail])
        #expect(PassStyle.storeCard.allowedImages == [.logo, .icon, .strip])
        #expect(PassStyle.eventTicket.key == "eventTicket")
    }
}
