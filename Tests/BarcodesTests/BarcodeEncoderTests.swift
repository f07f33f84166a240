import Barcodes
import PassModel
import Testing

@Suite("Barcodes: libzint drawings and encodability")
struct BarcodeEncoderTests {
    @Test(
        "every format draws a valid message as an SVG with bars and a quiet zone",
        arguments: [
            (BarcodeFormat.qr, "https://example.com/ticket/42"),
            (.pdf417, "M1APPLESEED/JANE      EK7QX2M LHRJFKPF 0117 335Y014C0042 100"),
            (.aztec, "ZÜRICH-001"),
            (.code128, "Größe 42"),
            (.code39, "MEMBER-0042"),
            (.codabar, "A40156B"),
            (.ean13, "4006381333931"),
            (.i2of5, "12345670"),
        ])
    func drawsValidMessages(format: BarcodeFormat, message: String) throws {
        let image = try BarcodeEncoder.image(message, format: format).get()
        #expect(image.svg.hasPrefix("<svg"))
        #expect(image.svg.contains("<path fill=\"#000\" d=\"M"))
        #expect(image.width > 10 && image.height > 10)
        #expect(BarcodeEncoder.problem(message, format: format) == nil)
        // The quiet zone: no bar starts at the left edge.
        #expect(!image.svg.contains("d=\"M0 "))
    }

    @Test(
        "a message that cannot be encoded is refused with the reason",
        arguments: [
            (BarcodeFormat.qr, String(repeating: "x", count: 3_000), "too long"),
            (.pdf417, "Привет", "not in ISO 8859-1"),
            (.aztec, String(repeating: "ab", count: 2_000), "too long"),
            (.code128, "東京 gate 5", "Code 128 encodes only ISO 8859-1"),
            (.code39, "member-42", "write the message in capitals"),
            (.codabar, "A12X4B", "Codabar encodes only digits"),
            (.ean13, "4006381333932", "check digit is wrong"),
            (.i2of5, "12345", "odd number"),
        ])
    func refusesUnencodableMessages(format: BarcodeFormat, message: String, reason: String) {
        let problem = BarcodeEncoder.problem(message, format: format)
        #expect(problem?.reason.contains(reason) == true, "\(String(describing: problem))")
        guard case .failure(let error) = BarcodeEncoder.image(message, format: format) else {
            Issue.record("\(format) drew \(message.prefix(20))")
            return
        }
        #expect(error.reason.contains(reason))
    }

    @Test("utf-8 messages may hold any text in 2D formats")
    func utf8InTwoDimensionalFormats() {
        #expect(BarcodeEncoder.problem("Привет 東京", format: .qr, messageEncoding: "utf-8") == nil)
        #expect(BarcodeEncoder.problem("Привет 東京", format: .qr, messageEncoding: "iso-8859-1") != nil)
    }

    @Test("the build's check points at the message of the barcode that fails")
    func validationDiagnostics() {
        let pass: JSONValue = .object(
            JSONObject([
                (
                    "barcodes",
                    .array([
                        .object(
                            JSONObject([
                                ("format", .string("PKBarcodeFormatQR")), ("message", .string("ok")),
                                ("messageEncoding", .string("iso-8859-1")),
                            ])),
                        .object(
                            JSONObject([
                                ("format", .string("PKBarcodeFormatCode128")), ("message", .string("→ gate")),
                                ("messageEncoding", .string("iso-8859-1")),
                            ])),
                    ])
                )
            ]))
        let problems = BarcodeValidation.diagnostics(for: pass)
        #expect(problems.count == 1)
        #expect(problems.first?.keyPath == [.key("barcodes"), .index(1), .key("message")])
        #expect(problems.first?.rule == "barcode.encodable")
        #expect(problems.first?.message.contains("“→” (U+2192) at position 1") == true)
    }
}
