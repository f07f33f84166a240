import PassModel
import Testing

@testable import Barcodes

/// QR and Aztec symbols are drawn from zint's module grid, not from its vector output. zint's own drawing is
/// the oracle: both must darken exactly the same modules, quiet zone and size included, so that a reader
/// decodes the same symbol from either.
@Suite("Barcodes: matrix symbols drawn from the module grid")
struct ModuleGridTests {
    /// Messages of many lengths (so many symbol versions), a landing page's URL among them.
    static let messages: [String] =
        [
            "A", "https://passes.example.com/download/Ab-_0123456789abcdefghij.html",
            "https://passes.example.com/download/Ab-_0123456789abcdefghij.fr.html", "ZÜRICH-001",
        ] + [7, 40, 120, 400, 900].map { String(repeating: "0123456789abcdefghijKLMNOP", count: $0 / 26 + 1) }

    @Test("the grid's SVG darkens the modules zint's vector drawing does", arguments: [BarcodeFormat.qr, .aztec])
    func sameModulesAsZint(format: BarcodeFormat) throws {
        for message in Self.messages {
            let prepared = try BarcodeEncoder.prepare(message, format: format, messageEncoding: "utf-8").get()
            let drawing = try ZintSymbol.draw(prepared.bytes, symbology: prepared.symbology).get()
            let image = try BarcodeEncoder.image(message, format: format, messageEncoding: "utf-8").get()
            #expect(image.width == drawing.width && image.height == drawing.height, "\(format) \(message)")
            let expected = Self.cells(drawing.bars.map { ($0.x, $0.y, $0.width, $0.height) })
            let drawn = Self.cells(try Self.rectangles(inPathOf: image.svg))
            #expect(!drawn.isEmpty)
            #expect(drawn == expected, "\(format) \(message): the drawings differ")
        }
    }

    @Test("the SVG is sized in modules, with a light quiet zone of 4 modules around a QR code")
    func quietZone() throws {
        let image = try BarcodeEncoder.image("https://passes.example.com/", format: .qr).get()
        #expect(image.svg.contains("viewBox=\"0 0 \(Int(image.width)) \(Int(image.height))\""))
        let cells = Self.cells(try Self.rectangles(inPathOf: image.svg))
        #expect(
            cells.allSatisfy { $0.x >= 4 && $0.y >= 4 && $0.x < Int(image.width) - 4 && $0.y < Int(image.height) - 4 })
        // The finder pattern's corners are dark (ISO/IEC 18004: a 7 × 7 square at three corners).
        #expect(cells.contains(Cell(x: 4, y: 4)) && cells.contains(Cell(x: 10, y: 10)))
    }

    struct Cell: Hashable { var x, y: Int }

    /// The unit cells a set of rectangles covers (every coordinate is a whole module here).
    static func cells(_ rectangles: [(Double, Double, Double, Double)]) -> Set<Cell> {
        var cells = Set<Cell>()
        for (x, y, width, height) in rectangles {
            for row in Int(y.rounded())..<Int((y + height).rounded()) {
                for column in Int(x.rounded())..<Int((x + width).rounded()) { cells.insert(Cell(x: column, y: row)) }
            }
        }
        return cells
    }

    /// The rectangles of a path made of `M x y h w v h h -w z` commands (the form both drawings use).
    static func rectangles(inPathOf svg: String) throws -> [(Double, Double, Double, Double)] {
        let parts = svg.split(separator: "\"")
        let index = try #require(parts.firstIndex { $0.hasSuffix(" d=") })
        let path = parts[index + 1]
        var rectangles: [(Double, Double, Double, Double)] = []
        for command in path.split(separator: "M") {
            let parts = command.split(whereSeparator: { "hvz ".contains($0) }).compactMap { Double($0) }
            try #require(parts.count == 5, "not a rectangle: M\(command)")
            #expect(parts[4] == -parts[2])
            rectangles.append((parts[0], parts[1], parts[2], parts[3]))
        }
        return rectangles
    }
}
