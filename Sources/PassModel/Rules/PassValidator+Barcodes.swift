// barcodes[] and the legacy barcode ("Pass.Barcodes" in Apple's Wallet
// Passes documentation): format, message and messageEncoding are required;
// Code128 does not show on Apple Watch; old devices read only `barcode`.

extension ValidationRun {
    /// Checks `barcodes` and `barcode`; returns the format of the barcode a
    /// device shows (the first of `barcodes`, else the legacy one), which
    /// decides the field limits of some styles.
    mutating func checkBarcodes() -> BarcodeFormat? {
        var shown: BarcodeFormat?
        var shownIsSet = false
        if let barcodes = array("barcodes", of: root, at: .root) {
            for (index, barcode) in barcodes.enumerated() {
                let path: JSONPath = [.key("barcodes"), .index(index)]
                guard expect(barcode, is: .object, at: path), let object = barcode.objectValue else { continue }
                let format = checkBarcode(object, at: path, isLegacy: false)
                if !shownIsSet {
                    shown = format
                    shownIsSet = true
                }
            }
        }
        var formats: [(format: BarcodeFormat?, path: JSONPath)] = []
        if let barcodes = root["barcodes"]?.arrayValue {
            for (index, barcode) in barcodes.enumerated() {
                let format = barcode["format"]?.stringValue.flatMap(BarcodeFormat.init(rawValue:))
                formats.append((format, [.key("barcodes"), .index(index), .key("format")]))
            }
        }
        if let legacy = object("barcode", of: root, at: .root) {
            let format = checkBarcode(legacy, at: [.key("barcode")], isLegacy: true)
            if !shownIsSet { shown = format }
            formats.append((format, [.key("barcode"), .key("format")]))
        }
        checkRecentFormatsHaveAFallback(formats)
        return shown
    }

    /// Code 39, Codabar, EAN-13 and I2of5 are valid, but an older iOS
    /// draws none of them: when every barcode of the pass has such a
    /// format, those devices show no barcode at all.
    mutating func checkRecentFormatsHaveAFallback(_ formats: [(format: BarcodeFormat?, path: JSONPath)]) {
        guard let first = formats.first, let format = first.format, format.isRecent,
            formats.allSatisfy({ $0.format?.isRecent ?? false })
        else { return }
        warning(
            first.path, "barcode.recentFormatOnly",
            "\(format.rawValue) is the pass's only barcode format, and older iOS versions do not draw "
                + "Code 39, Codabar, EAN-13 or I2of5, so they show no barcode; add a PKBarcodeFormatQR, "
                + "PKBarcodeFormatPDF417, PKBarcodeFormatAztec or PKBarcodeFormatCode128 barcode after it in "
                + "barcodes (Wallet shows the first one the device can draw)"
        )
    }

    /// One barcode: format, message and messageEncoding are required.
    mutating func checkBarcode(_ barcode: JSONObject, at path: JSONPath, isLegacy: Bool) -> BarcodeFormat? {
        reportUnknownKeys(
            in: barcode, at: path, known: Barcode.knownKeys,
            place: isLegacy ? "the legacy barcode" : "a barcode"
        )
        let subject = isLegacy ? "the legacy barcode" : "the barcode at \(path)"
        var format: BarcodeFormat?
        var formatPath: JSONPath { path.appending("format") }
        if barcode["format"] == nil {
            error(
                formatPath, "barcode.format",
                "\(subject) has no format; add \"format\": one of \(BarcodeFormat.allowedValues)")
        } else if let text = string("format", of: barcode, at: path) {
            format = BarcodeFormat(rawValue: text)
            if format == nil {
                let suggestion =
                    BarcodeFormat.suggestion(for: text).map { "; use \($0.rawValue)" } ?? "; use one of those"
                error(
                    formatPath, "barcode.format",
                    "barcode format \"\(text)\" is not one of \(BarcodeFormat.allowedValues)\(suggestion)")
            }
        }
        if format == .code128 {
            var message =
                "Apple Watch does not show PKBarcodeFormatCode128 barcodes; if the pass must scan from a "
                + "watch, use PKBarcodeFormatQR, PKBarcodeFormatPDF417 or PKBarcodeFormatAztec"
            if isLegacy {
                message +=
                    ". Old devices, which read only the legacy barcode key, cannot show Code128 at all; put a "
                    + "QR, PDF417 or Aztec code in barcode and keep Code128 in barcodes"
            }
            warning(formatPath, "barcode.code128", message)
        }
        if barcode["message"] == nil {
            error(
                path.appending("message"), "barcode.message",
                "\(subject) has no message; add \"message\": the text the barcode encodes")
        } else {
            _ = string("message", of: barcode, at: path)
        }
        if barcode["messageEncoding"] == nil {
            error(
                path.appending("messageEncoding"), "barcode.messageEncoding",
                "\(subject) has no messageEncoding; add \"messageEncoding\": "
                    + "\"iso-8859-1\" (or \"utf-8\" for text outside Latin-1)"
            )
        } else {
            _ = string("messageEncoding", of: barcode, at: path)
        }
        _ = string("altText", of: barcode, at: path)
        return format
    }
}
