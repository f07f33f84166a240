package import PassModel

/// A barcode drawn as Wallet would encode it: the message's bytes in the
/// pass's format, quiet zones included.
package struct BarcodeImage: Sendable {
    /// In modules (X-dimensions).
    package var width: Double
    package var height: Double
    /// A standalone SVG document, black bars on white, sized in modules
    /// (scale it with CSS; `shape-rendering: crispEdges` keeps bars sharp).
    package var svg: String
}

/// Why a message cannot be encoded in a format, written for the editor.
package struct BarcodeEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}

/// Encodes barcode messages with libzint, the same way for the preview and
/// for the build's check, so that a pass that builds also draws.
package enum BarcodeEncoder {
    /// Messages up to this many bytes always fit a QR, PDF417 or Aztec symbol
    /// in byte mode (their smallest byte capacities are above 1,100), so the
    /// check does not need to run the encoder for them.
    static let alwaysFittingTwoDimensionalBytes = 1_000

    /// Draws `message` in `format`, its bytes taken in `messageEncoding`.
    package static func image(_ message: String, format: BarcodeFormat, messageEncoding: String = "iso-8859-1")
        -> Result<BarcodeImage, BarcodeEncodingError>
    {
        let prepared: Prepared
        switch prepare(message, format: format, messageEncoding: messageEncoding) {
        case .success(let value): prepared = value
        case .failure(let error): return .failure(error)
        }
        if format == .qr || format == .aztec {
            switch ZintSymbol.modules(prepared.bytes, symbology: prepared.symbology) {
            case .success(let grid):
                let size = Double(grid.width + 2 * grid.margin)
                let height = Double(grid.rows + 2 * grid.margin)
                return .success(BarcodeImage(width: size, height: height, svg: svg(grid)))
            case .failure(let failure):
                return .failure(
                    BarcodeEncodingError(
                        reason: explain(failure.reason, format: format, byteCount: prepared.bytes.count)))
            }
        }
        switch ZintSymbol.draw(prepared.bytes, symbology: prepared.symbology, barHeight: format.isLinear ? 40 : nil) {
        case .success(let drawing):
            return .success(BarcodeImage(width: drawing.width, height: drawing.height, svg: svg(drawing)))
        case .failure(let failure):
            return .failure(
                BarcodeEncodingError(reason: explain(failure.reason, format: format, byteCount: prepared.bytes.count)))
        }
    }

    /// Nil when `message` can be encoded in `format`, else why not.
    package static func problem(_ message: String, format: BarcodeFormat, messageEncoding: String = "iso-8859-1")
        -> BarcodeEncodingError?
    {
        let prepared: Prepared
        switch prepare(message, format: format, messageEncoding: messageEncoding) {
        case .success(let value): prepared = value
        case .failure(let error): return error
        }
        if !format.isLinear, !prepared.bytes.isEmpty, prepared.bytes.count <= alwaysFittingTwoDimensionalBytes {
            return nil
        }
        if case .failure(let failure) = ZintSymbol.draw(prepared.bytes, symbology: prepared.symbology) {
            return BarcodeEncodingError(
                reason: explain(failure.reason, format: format, byteCount: prepared.bytes.count))
        }
        return nil
    }

    // MARK: - Preparing the bytes

    struct Prepared {
        var bytes: [UInt8]
        var symbology: Int32
    }

    /// The bytes zint gets, after the checks that give an editor a precise
    /// reason (which character, at which position) rather than zint's.
    static func prepare(_ message: String, format: BarcodeFormat, messageEncoding: String) -> Result<
        Prepared, BarcodeEncodingError
    > {
        let name = format.displayName
        if message.isEmpty {
            return .failure(.init(reason: "the message is empty; a \(name) barcode needs at least one character"))
        }
        switch format {
        case .qr, .pdf417, .aztec:
            let symbology = format == .qr ? ZintSymbol.qr : format == .pdf417 ? ZintSymbol.pdf417 : ZintSymbol.aztec
            return bytes(of: message, encoding: messageEncoding).map { Prepared(bytes: $0, symbology: symbology) }
        case .code128:
            if let (character, position) = firstCharacter(of: message, where: { $0.value > 0xFF }) {
                return .failure(
                    .init(
                        reason: "Code 128 encodes only ISO 8859-1 (Latin-1) characters, and "
                            + "\(describe(character)) at position \(position) is not one; use a QR, PDF417 "
                            + "or Aztec barcode with messageEncoding utf-8 for this text"))
            }
            return .success(
                Prepared(bytes: message.unicodeScalars.map { UInt8($0.value) }, symbology: ZintSymbol.code128))
        case .code39:
            let allowed = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ -.$/+%".unicodeScalars)
            if let (character, position) = firstCharacter(of: message, where: { !allowed.contains($0) }) {
                let hint = character.properties.isLowercase ? "; write the message in capitals" : ""
                return .failure(
                    .init(
                        reason: "Code 39 encodes only digits, capital letters A–Z, space and - . $ / + %, and "
                            + "\(describe(character)) at position \(position) is not one\(hint)"))
            }
            return .success(Prepared(bytes: Array(message.utf8), symbology: ZintSymbol.code39))
        case .codabar:
            let body = Set("0123456789-$:/.+".unicodeScalars)
            let guards = Set("ABCDabcd".unicodeScalars)
            var text = Array(message.unicodeScalars)
            // Codabar starts and ends with a guard A, B, C or D; a message without them gets A…A.
            if text.count >= 2, guards.contains(text[0]), guards.contains(text[text.count - 1]) {
                text = Array(text.dropFirst().dropLast())
            } else if let first = text.first, guards.contains(first) || guards.contains(text.last!) {
                return .failure(
                    .init(
                        reason: "a Codabar message either starts and ends with a guard letter (A, B, C or D), or "
                            + "has none; \(describe(first)) … \(describe(text.last!)) has only one"))
            }
            if let index = text.firstIndex(where: { !body.contains($0) }) {
                return .failure(
                    .init(
                        reason: "Codabar encodes only digits and - $ : / . + between its guard "
                            + "letters, and \(describe(text[index])) is not one"))
            }
            let framed =
                message.unicodeScalars.first.map { guards.contains($0) } == true && message.count >= 2
                ? message.uppercased() : "A\(message)A"
            return .success(Prepared(bytes: Array(framed.utf8), symbology: ZintSymbol.codabar))
        case .ean13:
            if let (character, position) = firstCharacter(of: message, where: { !("0"..."9").contains($0) }) {
                return .failure(
                    .init(
                        reason:
                            "EAN-13 encodes only digits, and \(describe(character)) at position \(position) is not one")
                )
            }
            let digits = message.unicodeScalars.map { Int($0.value) - 48 }
            guard digits.count == 12 || digits.count == 13 else {
                return .failure(
                    .init(
                        reason: "EAN-13 encodes exactly 12 digits plus a check digit; the "
                            + "message has \(digits.count) digits"))
            }
            let check = ean13CheckDigit(Array(digits.prefix(12)))
            if digits.count == 13, digits[12] != check {
                return .failure(
                    .init(
                        reason: "the EAN-13 check digit is wrong: for "
                            + "\(message.prefix(12)) it is \(check), not \(digits[12])"))
            }
            return .success(
                Prepared(
                    bytes: Array(message.utf8),
                    symbology: digits.count == 13 ? ZintSymbol.ean13WithCheckDigit : ZintSymbol.ean13))
        case .i2of5:
            if let (character, position) = firstCharacter(of: message, where: { !("0"..."9").contains($0) }) {
                return .failure(
                    .init(
                        reason: "Interleaved 2 of 5 encodes only digits, and "
                            + "\(describe(character)) at position \(position) is not one"))
            }
            if message.unicodeScalars.count % 2 == 1 {
                return .failure(
                    .init(
                        reason: "Interleaved 2 of 5 encodes digits in pairs, and the message has an odd "
                            + "number (\(message.unicodeScalars.count)); add a leading 0"))
            }
            return .success(Prepared(bytes: Array(message.utf8), symbology: ZintSymbol.interleaved2of5))
        }
    }

    /// The message's bytes in its messageEncoding, as Wallet converts it.
    static func bytes(of message: String, encoding: String) -> Result<[UInt8], BarcodeEncodingError> {
        switch encoding.lowercased() {
        case "iso-8859-1", "iso_8859-1", "latin1", "iso-latin-1", "l1", "cp819", "ibm819":
            if let (character, position) = firstCharacter(of: message, where: { $0.value > 0xFF }) {
                return .failure(
                    .init(
                        reason: "\(describe(character)) at position \(position) is not in ISO 8859-1 (Latin-1), "
                            + "the messageEncoding; set \"messageEncoding\": \"utf-8\""))
            }
            return .success(message.unicodeScalars.map { UInt8($0.value) })
        case "us-ascii", "ascii":
            if let (character, position) = firstCharacter(of: message, where: { $0.value > 0x7F }) {
                return .failure(
                    .init(
                        reason: "\(describe(character)) at position \(position) is not ASCII, the "
                            + "messageEncoding; set \"messageEncoding\": \"utf-8\""))
            }
            return .success(Array(message.utf8))
        default:
            return .success(Array(message.utf8))
        }
    }

    static func ean13CheckDigit(_ twelve: [Int]) -> Int {
        let sum = twelve.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return (10 - sum % 10) % 10
    }

    /// The first character (and its 1-based position) that fails.
    static func firstCharacter(of message: String, where fails: (Unicode.Scalar) -> Bool) -> (Unicode.Scalar, Int)? {
        for (offset, scalar) in message.unicodeScalars.enumerated() where fails(scalar) { return (scalar, offset + 1) }
        return nil
    }

    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return scalar.properties.isWhitespace || scalar.value < 0x20 ? code : "“\(Character(scalar))” (\(code))"
    }

    static func explain(_ reason: String, format: BarcodeFormat, byteCount: Int) -> String {
        if reason.lowercased().contains("too long") {
            return "the message is too long for a \(format.displayName) barcode (\(byteCount) bytes; "
                + "libzint: \(reason)); shorten it or put the data on the back of the pass"
        }
        return "libzint cannot encode the message as \(format.displayName): \(reason)"
    }

    // MARK: - SVG

    /// A matrix symbol as one path: each row's runs of dark modules as `M x y h n v1 h -n z`, in whole modules.
    /// The same document as `svg(_: Drawing)` draws from zint's rectangles, made straight from the grid into
    /// the string's own buffer (a landing page draws one per page, so this is on a full build's path).
    static func svg(_ grid: ModuleGrid) -> String {
        let (width, height) = (grid.width + 2 * grid.margin, grid.rows + 2 * grid.margin)
        // A run takes at most 4 numbers of up to 3 digits and 9 other bytes; a row has at most width / 2 + 1 runs.
        let capacity = 512 + grid.rows * (grid.width / 2 + 1) * 21
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var out = ByteWriter(buffer: buffer)
            out.write("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ")
            out.write(width, " ", height, "\" width=\"")
            out.write(width, "\" height=\"", height, "\" shape-rendering=\"crispEdges\">")
            out.write("<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><path fill=\"#000\" d=\"")
            grid.dark.withUnsafeBufferPointer { dark in
                for row in 0..<grid.rows {
                    let first = row * grid.width
                    var column = 0
                    while column < grid.width {
                        guard dark[first + column] else {
                            column += 1
                            continue
                        }
                        let start = column
                        while column < grid.width, dark[first + column] { column += 1 }
                        out.write("M")
                        out.write(start + grid.margin, " ", row + grid.margin, "h")
                        out.write(column - start, "v1h-", column - start, "z")
                    }
                }
            }
            out.write("\"/></svg>")
            return out.count
        }
    }

    /// Appends ASCII to a buffer sized beforehand.
    private struct ByteWriter {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        var count = 0

        mutating func write(_ text: StaticString) {
            let length = text.utf8CodeUnitCount
            UnsafeMutableRawPointer(buffer.baseAddress! + count).copyMemory(from: text.utf8Start, byteCount: length)
            count += length
        }

        mutating func write(_ number: Int) {
            var digits = 1
            var rest = number / 10
            while rest > 0 {
                digits += 1
                rest /= 10
            }
            var value = number
            for index in stride(from: count + digits - 1, through: count, by: -1) {
                buffer[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
            count += digits
        }

        mutating func write(_ first: Int, _ between: StaticString, _ second: Int, _ after: StaticString) {
            write(first)
            write(between)
            write(second)
            write(after)
        }
    }

    static func svg(_ drawing: ZintSymbol.Drawing) -> String {
        func number(_ value: Double) -> String {
            let rounded = (value * 1000).rounded() / 1000
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        var path = ""
        path.reserveCapacity(drawing.bars.count * 24)
        for bar in drawing.bars {
            path +=
                "M\(number(bar.x)) \(number(bar.y))h\(number(bar.width))v\(number(bar.height))h-\(number(bar.width))z"
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(number(drawing.width)) \(number(drawing.height))" \
            width="\(number(drawing.width))" height="\(number(drawing.height))" shape-rendering="crispEdges">\
            <rect width="100%" height="100%" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}

extension BarcodeFormat {
    /// One row of bars (Code 128, Code 39, Codabar, EAN-13, I2of5) rather than a 2D symbol.
    package var isLinear: Bool { ![.qr, .pdf417, .aztec].contains(self) }

    /// The format's common name, for messages and the preview.
    package var displayName: String {
        switch self {
        case .qr: "QR"
        case .pdf417: "PDF417"
        case .aztec: "Aztec"
        case .code128: "Code 128"
        case .code39: "Code 39"
        case .codabar: "Codabar"
        case .ean13: "EAN-13"
        case .i2of5: "Interleaved 2 of 5"
        }
    }
}
