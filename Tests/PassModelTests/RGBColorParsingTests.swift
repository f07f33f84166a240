import Testing

@testable import PassModel

/// The byte reader of colours (ASCII texts) answers exactly as the general
/// character reader, which stays for texts with other characters.
@Suite struct RGBColorParsingTests {
    /// A small seeded generator, so a failure is the same on every run.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let pieces = [
        "rgb(", "rgb (", "RGB(", ")", ",", " ", "\t", "\n", "\r\n", "\u{0B}", "+", "-", "0", "00", "1", "25", "255",
        "256",
        "999999999999999999999999", "7", "x", "(", "",
    ]
    static let spaces = ["", "", " ", "  ", "\t", "\n", "\r\n", "\u{0B}", "\u{0C}", "\u{1F}"]
    static let numbers = [
        "0", "00", "1", "25", "255", "0255", "256", "+7", "-0", "-1", "+", "", "1 2", "12a", "999999999999999999999999",
    ]

    @Test func theByteReaderAgreesWithTheCharacterReaderOnASCIIText() {
        var random = Generator(state: 11)
        var colours = 0
        for _ in 0..<20_000 {
            // Two in three are near-colours: white space, signs and numbers in the places of a colour; the rest any pieces.
            var text = ""
            if random.next(3) > 0 {
                func space() -> String { Self.spaces[random.next(Self.spaces.count)] }
                func number() -> String { space() + Self.numbers[random.next(Self.numbers.count)] + space() }
                text = space() + "rgb(" + number() + "," + number() + "," + number() + ")" + space()
                if random.next(4) == 0 { text += Self.pieces[random.next(Self.pieces.count)] }
            } else {
                for _ in 0..<9 { text += Self.pieces[random.next(Self.pieces.count)] }
            }
            let fast = RGBColor.parseASCII(text)
            #expect(fast != nil, "\(text.debugDescription) is ASCII")
            #expect(fast ?? nil == RGBColor.parseCharacters(text), "\(text.debugDescription)")
            if RGBColor.parseCharacters(text) != nil { colours += 1 }
        }
        // The generator reaches both answers often.
        #expect(colours > 400)
    }

    @Test(arguments: ["rgb(1,2,3)", " rgb( 0 , 255 ,+7 ) ", "rgb(-0, 00255, 0)", "\trgb(1,2,3)\r\n"])
    func coloursRead(text: String) {
        #expect(RGBColor(parsing: text) != nil)
    }

    @Test(arguments: [
        "rgb(1,2)", "rgb(1,2,3,4)", "rgb(256,0,0)", "rgb(-1,0,0)", "rgb(1,,3)", "rgb( , 1, 2)", "rgb(1,2,3", "#ffffff",
        "",
    ])
    func notColours(text: String) {
        #expect(RGBColor(parsing: text) == nil)
    }

    @Test func textWithOtherCharactersIsReadCharacterByCharacter() {
        // U+00A0, a no-break space, is white space to Character but not ASCII.
        #expect(RGBColor.parseASCII("rgb(1,2,3)\u{A0}") == .none)
        #expect(RGBColor(parsing: "\u{A0}rgb(1,\u{2003}2,3)\u{A0}") == RGBColor(red: 1, green: 2, blue: 3))
        #expect("\u{A0}x\u{A0}".trimmingSpaces() == "x")
        #expect("x y".trimmingSpaces() == "x y")
        #expect(" \r\nx\t".trimmingSpaces() == "x")
    }
}
