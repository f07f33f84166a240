import CZint

/// The one place that calls libzint: encodes bytes in one symbology and
/// returns the symbol as rectangles, quiet zones included.
enum ZintSymbol {
    struct Rectangle: Sendable, Hashable {
        var x, y, width, height: Double
    }

    struct Drawing: Sendable {
        /// In X-dimensions (module widths), quiet zones included.
        var width: Double
        var height: Double
        var bars: [Rectangle]
    }

    /// Encodes `bytes` as they are (zint's DATA_MODE: no conversion); on
    /// failure returns zint's reason, without its "Error NNN: " prefix.
    static func draw(_ bytes: [UInt8], symbology: Int32, barHeight: Float? = nil) -> Result<Drawing, ZintFailure> {
        guard let symbol = ZBarcode_Create() else {
            return .failure(ZintFailure(reason: "libzint could not allocate a symbol"))
        }
        defer { ZBarcode_Delete(symbol) }
        configure(symbol, symbology: symbology)
        if let barHeight { symbol.pointee.height = barHeight }
        var status = encode(bytes, into: symbol)
        if status < ZINT_ERROR { status = ZBarcode_Buffer_Vector(symbol, 0) }
        guard status < ZINT_ERROR, let vector = symbol.pointee.vector else {
            return .failure(ZintFailure(reason: errorText(symbol)))
        }
        var bars: [Rectangle] = []
        var next = vector.pointee.rectangles
        while let rectangle = next {
            let r = rectangle.pointee
            bars.append(Rectangle(x: Double(r.x), y: Double(r.y), width: Double(r.width), height: Double(r.height)))
            next = r.next
        }
        // Vector output is scaled so that one module is `scale` * 2 units in some versions; normalise to modules.
        let module = bars.map(\.width).min().map { max($0, 0.0001) } ?? 1
        let unit = module < 1.5 ? 1.0 : module
        return .success(
            Drawing(
                width: Double(vector.pointee.width) / unit, height: Double(vector.pointee.height) / unit,
                bars: bars.map {
                    Rectangle(x: $0.x / unit, y: $0.y / unit, width: $0.width / unit, height: $0.height / unit)
                }))
    }

    /// A matrix symbol (QR, Aztec) as its grid of dark modules, read from zint's encoded rows: no vector output.
    /// zint's vector output allocates a rectangle per run of modules and then merges them pairwise, a search
    /// over the whole list for each one; for a landing page's QR code that was most of the page's cost.
    static func modules(_ bytes: [UInt8], symbology: Int32) -> Result<ModuleGrid, ZintFailure> {
        guard let symbol = ZBarcode_Create() else {
            return .failure(ZintFailure(reason: "libzint could not allocate a symbol"))
        }
        defer { ZBarcode_Delete(symbol) }
        configure(symbol, symbology: symbology)
        guard encode(bytes, into: symbol) < ZINT_ERROR else { return .failure(ZintFailure(reason: errorText(symbol))) }
        let (width, rows) = (Int(symbol.pointee.width), Int(symbol.pointee.rows))
        var dark = [Bool](repeating: false, count: width * rows)
        withUnsafeBytes(of: &symbol.pointee.encoded_data) { raw in
            // encoded_data is [200][144] bytes: each row's modules one bit each, the lowest bit first.
            let rowBytes = raw.count / 200
            for row in 0..<rows {
                for column in 0..<width where raw[row * rowBytes + column >> 3] >> (column & 7) & 1 == 1 {
                    dark[row * width + column] = true
                }
            }
        }
        return .success(ModuleGrid(width: width, rows: rows, margin: matrixMargin(symbology), dark: dark))
    }

    /// The light margin around a matrix symbol, in modules, as `draw` gives it: QR's quiet zone of 4 modules
    /// (ISO/IEC 18004, 7.3.8, which zint adds for BARCODE_QUIET_ZONES) or the 2 modules set for Aztec below.
    static func matrixMargin(_ symbology: Int32) -> Int { symbology == qr ? 4 : 2 }

    private static func configure(_ symbol: UnsafeMutablePointer<zint_symbol>, symbology: Int32) {
        symbol.pointee.symbology = symbology
        symbol.pointee.input_mode = Int32(DATA_MODE)
        symbol.pointee.show_hrt = 0
        symbol.pointee.output_options |= Int32(BARCODE_QUIET_ZONES)
        // QR: one mask pattern (ISO/IEC 18004's data masking; zint takes it as option_3 = (N + 1) << 8) instead of
        // trying all eight and scoring each, which was a third of a landing page's time (a QR code on each page:
        // 0.17 ms of CPU per pass of a 10,000-pass build). A reader decodes any mask: the mask is in the format
        // information; the scoring only avoids patterns that are harder to read.
        if symbology == qr { symbol.pointee.option_3 = Int32((Self.qrMask + 1) << 8) }
        // Aztec needs no quiet zone by its specification, so zint adds none; a margin helps a camera find it on screen.
        if symbology == aztec {
            symbol.pointee.whitespace_width = Int32(matrixMargin(aztec))
            symbol.pointee.whitespace_height = Int32(matrixMargin(aztec))
        }
    }

    private static func encode(_ bytes: [UInt8], into symbol: UnsafeMutablePointer<zint_symbol>) -> Int32 {
        bytes.withUnsafeBufferPointer { buffer in ZBarcode_Encode(symbol, buffer.baseAddress, Int32(buffer.count)) }
    }

    private static func errorText(_ symbol: UnsafeMutablePointer<zint_symbol>) -> String {
        let text = withUnsafeBytes(of: symbol.pointee.errtxt) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        // "Error 773: Input too long" → "Input too long"
        if text.hasPrefix("Error "), let colon = text.firstIndex(of: ":") {
            return String(text[text.index(after: colon)...]).trimmingCharacters(in: " ")
        }
        return text.isEmpty ? "libzint refused the data" : text
    }

    static let qr = Int32(BARCODE_QRCODE)
    /// The QR mask pattern drawn (0–7): 2, `j mod 3 = 0` (every third column).
    static let qrMask = 2
    static let pdf417 = Int32(BARCODE_PDF417)
    static let aztec = Int32(BARCODE_AZTEC)
    static let code128 = Int32(BARCODE_CODE128)
    static let code39 = Int32(BARCODE_CODE39)
    static let codabar = Int32(BARCODE_CODABAR)
    static let ean13 = Int32(BARCODE_EANX)
    static let ean13WithCheckDigit = Int32(BARCODE_EANX_CHK)
    static let interleaved2of5 = Int32(BARCODE_C25INTER)
}

/// A matrix symbol's modules: `dark[row * width + column]`, without its margin.
struct ModuleGrid: Sendable {
    var width: Int
    var rows: Int
    /// Light modules on every side (the quiet zone).
    var margin: Int
    var dark: [Bool]
}

struct ZintFailure: Error, Sendable {
    var reason: String
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}
