import Testing

@testable import PassModel

@Suite struct BarcodeRuleTests {
    let qr: JSONValue = ["format": "PKBarcodeFormatQR", "message": "m", "messageEncoding": "iso-8859-1"]

    func pass(barcodes: JSONValue) -> JSONValue { minimalPass(.generic).setting("barcodes", barcodes) }

    @Test func barcodesMustBeAnArrayOfObjects() {
        #expect(problems(of: pass(barcodes: qr)) == ["error key.type @ barcodes"])
        #expect(problems(of: pass(barcodes: ["QR"])) == ["error key.type @ barcodes[0]"])
    }

    @Test func formatMissing() {
        #expect(
            problems(of: pass(barcodes: [qr.setting("format", nil)])) == ["error barcode.format @ barcodes[0].format"])
    }

    @Test func formatMustBeKnown() {
        let diagnostics = validate(pass(barcodes: [qr, qr.setting("format", "QR")]))
        #expect(problems(diagnostics) == ["error barcode.format @ barcodes[1].format"])
        #expect(
            diagnostics[0].message
                == "barcode format \"QR\" is not one of PKBarcodeFormatQR, PKBarcodeFormatPDF417, PKBarcodeFormatAztec, PKBarcodeFormatCode128, PKBarcodeFormatCode39, PKBarcodeFormatCodabar, PKBarcodeFormatEAN13, PKBarcodeFormatI2of5; use PKBarcodeFormatQR"
        )
    }

    @Test func messageRequired() {
        #expect(
            problems(of: pass(barcodes: [qr.setting("message", nil)])) == [
                "error barcode.message @ barcodes[0].message"
            ])
    }

    @Test func messageMustBeAString() {
        #expect(
            problems(of: pass(barcodes: [qr.setting("message", 12345)])) == ["error key.type @ barcodes[0].message"])
    }

    @Test func messageEncodingRequired() {
        let diagnostics = validate(pass(barcodes: [qr.setting("messageEncoding", nil)]))
        #expect(problems(diagnostics) == ["error barcode.messageEncoding @ barcodes[0].messageEncoding"])
        #expect(diagnostics[0].message.contains("iso-8859-1"))
    }

    @Test func altTextMustBeAString() {
        #expect(problems(of: pass(barcodes: [qr.setting("altText", 1)])) == ["error key.type @ barcodes[0].altText"])
    }

    @Test func code128IsAWarningBecauseWatchOSDoesNotShowIt() {
        let diagnostics = validate(pass(barcodes: [qr.setting("format", "PKBarcodeFormatCode128")]))
        #expect(problems(diagnostics) == ["warning barcode.code128 @ barcodes[0].format"])
        #expect(diagnostics[0].message.contains("Apple Watch"))
    }

    @Test func legacyBarcodeFollowsTheSameRules() {
        let json = minimalPass(.generic).setting("barcode", ["format": "PKBarcodeFormatCode93"])
        let diagnostics = validate(json)
        #expect(diagnostics.last?.message.hasPrefix("the legacy barcode has no messageEncoding") == true)
        #expect(
            problems(diagnostics) == [
                "error barcode.format @ barcode.format",
                "error barcode.message @ barcode.message",
                "error barcode.messageEncoding @ barcode.messageEncoding",
            ])
    }

    @Test func legacyCode128WarnsAboutOldDevicesToo() {
        let json = minimalPass(.generic).setting("barcode", qr.setting("format", "PKBarcodeFormatCode128"))
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["warning barcode.code128 @ barcode.format"])
        #expect(diagnostics[0].message.contains("Old devices"))
    }

    @Test func legacyBarcodeMustBeAnObject() {
        #expect(problems(of: minimalPass(.generic).setting("barcode", [qr])) == ["error key.type @ barcode"])
    }
}
