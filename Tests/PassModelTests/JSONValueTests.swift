import Foundation
import Testing

@testable import PassModel

@Suite struct JSONParserTests {
    @Test func keepsKeyOrderAndTypes() throws {
        let value = try JSONValue(parsing: #"{"z": 1, "a": [true, null, 1.5, -2e3, "x"], "m": {"k": "v"}}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value["z"] == .int(1))
        #expect(value["a"] == [true, nil, 1.5, .double(-2000), "x"])
        #expect(value.serializedString() == #"{"z":1,"a":[true,null,1.5,-2000,"x"],"m":{"k":"v"}}"#)
    }

    @Test func decodesEscapes() throws {
        let value = try JSONValue(parsing: #""a\"b\\c\/d\n\u00e9\ud83c\udf9f""#)
        #expect(value == .string("a\"b\\c/d\né🎟"))
    }

    @Test func roundTripsThroughSerialization() throws {
        let original = validPass(.boardingPass)
        #expect(try JSONValue(parsing: original.serialized()) == original)
        #expect(try JSONValue(parsing: original.serialized(pretty: true)) == original)
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1),
        ("{\n  \"a\": tru\n}", 2),
        ("[1, 2", 1),
        ("{\"a\" 1}", 1),
        ("01", 1),
        ("\"unterminated", 1),
        ("{} extra", 1),
        ("\n\n  \"bad \\x escape\"", 3),
    ])
    func reportsErrorsWithLine(text: String, line: Int) {
        do {
            _ = try JSONValue(parsing: text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
        }
    }

    @Test(arguments: [
        ("{\"a\": 1, \"a\": 2}", JSONParseError.Kind.duplicateKey),
        (String(repeating: "[", count: 200), .tooDeep),
        ("1e999", .numberOutOfRange),
        ("{\"a\": 1,}", .syntax),
    ])
    func errorsSayWhatKindOfProblemTheyAre(text: String, kind: JSONParseError.Kind) {
        #expect { try JSONValue(parsing: text) } throws: { ($0 as? JSONParseError)?.kind == kind }
    }

    @Test func errorColumn() {
        #expect(throws: JSONParseError(.syntax, line: 2, column: 8, message: "expected 'true'")) {
            try JSONValue(parsing: "{\n  \"a\": tru\n}")
        }
    }
}

@Suite struct CodableTests {
    struct Sample: Codable, Equatable {
        var name: String
        var count: Int
        var ratio: Double?
        var tags: [String]
        var extra: JSONValue
    }

    @Test func encoderKeepsCodingKeyOrderAndDecoderReadsItBack() throws {
        let sample = Sample(name: "n", count: 3, ratio: nil, tags: ["a"], extra: ["z": 1, "a": 2])
        let json = try JSONValueEncoder().encode(sample)
        #expect(json.serializedString() == #"{"name":"n","count":3,"tags":["a"],"extra":{"z":1,"a":2}}"#)
        #expect(try JSONValueDecoder().decode(Sample.self, from: json) == sample)
    }

    @Test func decoderReportsTheCodingPathOfAWrongType() {
        do {
            _ = try JSONValueDecoder().decode(Sample.self, from: ["name": "n", "count": "3", "tags": [], "extra": nil])
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["count"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func integersDecodeOnlyFromWholeNumbers() throws {
        #expect(try JSONValueDecoder().decode(Int.self, from: 2.0) == 2)
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int.self, from: 2.5) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt16.self, from: 70000) }
    }
}

@Suite struct PassModelTests {
    @Test(arguments: PassStyle.allCases)
    func decodesEveryValidFixture(style: PassStyle) throws {
        let pass = try Pass(json: validPass(style))
        #expect(pass.style == style)
        #expect(pass.serialNumber == "SN-0001")
        // Encoding and decoding again gives the same model.
        #expect(try Pass(json: pass.json) == pass)
    }

    @Test func readsFieldsForInspect() throws {
        let pass = try Pass(json: validPass(.boardingPass))
        let structure = try #require(pass.structure)
        #expect(structure.transitType == .air)
        #expect(structure[.primary].map(\.value) == [.string("SFO"), .string("LHR")])
        #expect(structure[.header][2].value == .number(3))
        #expect(structure[.header][0].textAlignment == .right)
        #expect(structure[.auxiliary][0].timeStyle == .short)
        #expect(structure[.auxiliary][0].value.dateValue?.utcOffset == -8 * 3600)
        #expect(structure[.back][0].dataDetectorTypes == [.phoneNumber, .link])
        #expect(structure.allFields.count == 12)
        #expect(pass.backgroundColor == RGBColor(red: 20, green: 40, blue: 80))
        #expect(pass.labelColor?.description == "rgb(200, 200, 200)")
        #expect(pass.barcodes?.first?.format == .pdf417)
        #expect(pass.beacons?.first?.minor == 65535)
        #expect(pass.relevantDates?.first?.startDate?.text == "2026-12-01T07:30Z")
        #expect(pass.nfc?.encryptionPublicKey == p256PublicKey)
        #expect(pass.semantics?["airlineCode"] == "EX")
        #expect(pass.userInfo?.objectValue?.keys == ["tier", "miles"])
        #expect(pass.associatedStoreIdentifiers == [284_882_215])
    }

    @Test func numericValuesStayIntegers() throws {
        let pass = try Pass(json: validPass(.coupon))
        #expect(pass.coupon?.primaryFields?.first?.value == .number(0.25))
        #expect(pass.json.value(at: "coupon.auxiliaryFields[0].value") == .int(20))
    }

    @Test func buildsAPassInCodeThatValidates() {
        var structure = PassStructure(transitType: .train)
        structure[.primary] = [
            Field(key: "from", label: "FROM", value: .string("Paris")),
            Field(key: "to", label: "TO", value: .string("Lyon")),
        ]
        var pass = Pass(
            passTypeIdentifier: "pass.com.example.rail", serialNumber: "R-1", teamIdentifier: "A1B2C3D4E5",
            organizationName: "Example Rail", description: "Train ticket", style: .boardingPass, structure: structure
        )
        pass.barcodes = [Barcode(format: .qr, message: "R-1")]
        pass.backgroundColor = RGBColor(red: 1, green: 2, blue: 3)
        pass.relevantDate = try? W3CDate(parsing: "2026-05-01T08:00+02:00")
        #expect(problems(of: pass.json) == [])
        #expect(
            pass.json.objectValue?.keys.prefix(6) == [
                "formatVersion", "passTypeIdentifier", "serialNumber", "teamIdentifier", "organizationName",
                "description",
            ])
        #expect(pass.json["backgroundColor"] == "rgb(1, 2, 3)")
    }

    @Test func decodingRejectsValuesApplesFormatRejects() {
        #expect(throws: DecodingError.self) {
            try Pass(json: minimalPass(.boardingPass).setting("boardingPass.transitType", "plane"))
        }
        #expect(throws: DecodingError.self) {
            try Pass(json: minimalPass(.generic).setting("relevantDate", "2026-12-01"))
        }
        #expect(throws: DecodingError.self) { try Pass(json: minimalPass(.generic).setting("labelColor", "#fff")) }
        #expect(throws: DecodingError.self) { try Pass(json: minimalPass(.generic).setting("serialNumber", nil)) }
    }
}

@Suite struct W3CDateTests {
    @Test(arguments: [
        ("1970-01-01T00:00Z", 0.0),
        ("2000-03-01T00:00:00Z", 951_868_800),
        ("2026-12-01T09:30-08:00", 1_796_146_200),
        ("2026-12-01T17:30:00.5Z", 1_796_146_200.5),
        ("1969-12-31T23:59:59Z", -1),
    ])
    func secondsSince1970(text: String, seconds: Double) throws {
        #expect(try W3CDate(parsing: text).secondsSince1970 == seconds)
    }

    @Test func errorsSayWhatIsMissing() {
        #expect(throws: W3CDate.ParseError.missingTime) { try W3CDate(parsing: "2026-12-01") }
        #expect(throws: W3CDate.ParseError.missingTimeZone) { try W3CDate(parsing: "2026-12-01T10:00") }
        #expect(throws: W3CDate.ParseError.malformed) { try W3CDate(parsing: "2026-12-01T10") }
        #expect(throws: W3CDate.ParseError.outOfRange("day 31, but that month has 30 days")) {
            try W3CDate(parsing: "2026-11-31T10:00Z")
        }
    }
}

@Suite struct SupportTests {
    @Test func base64() {
        #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(Base64.decode("aGVsbG8") == Array("hello".utf8))
        #expect(Base64.decode("aGVsbA==") == Array("hell".utf8))
        #expect(Base64.decode("+/+/") == [0xFB, 0xFF, 0xBF])
        #expect(Base64.decode("aGVs bG8=") == nil)
        #expect(Base64.decode("a===") == nil)
        #expect(Base64.decode("aG=Vs") == nil)
        #expect(Base64.decode("") == nil)
    }

    @Test func subjectPublicKeyInfoChecksThePoint() {
        let algorithm: [UInt8] = [
            0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D,
            0x03, 0x01, 0x07,
        ]
        func spki(_ point: [UInt8]) -> [UInt8] {
            let bitString: [UInt8] = [0x03, UInt8(point.count + 1), 0x00] + point
            return [0x30, UInt8(algorithm.count + bitString.count)] + algorithm + bitString
        }
        #expect(SubjectPublicKeyInfo.checkP256(spki([0x04] + Array(repeating: 1, count: 64))) == nil)
        #expect(SubjectPublicKeyInfo.checkP256(spki([0x04] + Array(repeating: 1, count: 10))) == .badPoint)
        #expect(SubjectPublicKeyInfo.checkP256(spki([0x05] + Array(repeating: 1, count: 64))) == .badPoint)
        #expect(
            SubjectPublicKeyInfo.oidString([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]) == "1.2.840.10045.3.1.7")
    }

    @Test func spelling() {
        #expect(Spelling.distance("kitten", "sitting") == 3)
        #expect(Spelling.distance("lable", "label") == 1)
        #expect(Spelling.nearest(to: "webserviceurl", in: Pass.knownKeys) == "webServiceURL")
        #expect(Spelling.nearest(to: "row", in: ["key"]) == nil)
        #expect(Spelling.nearest(to: "nothinglikeit", in: Pass.knownKeys) == nil)
    }

    @Test func rgbColor() {
        #expect(RGBColor(parsing: "rgb(0,0,0)") == RGBColor(red: 0, green: 0, blue: 0))
        #expect(RGBColor(parsing: "rgb( 255 , 255 , 255 )") == RGBColor(red: 255, green: 255, blue: 255))
        #expect(RGBColor(parsing: "rgb(255, 255)") == nil)
        #expect(RGBColor.fromHex("#fff") == RGBColor(red: 255, green: 255, blue: 255))
    }
}

@Suite struct FoundationInteropTests {
    @Test func jsonValueWorksWithFoundationCoders() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": ["c": "d"]]
        let data = try JSONEncoder().encode(value)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(decoded["a"] == [1, 2.5, "x", true, nil])
        #expect(decoded["b"] == ["c": "d"])
    }

    @Test func passDecodesThroughFoundationToo() throws {
        let data = Data(validPass(.storeCard).serialized())
        let pass = try JSONDecoder().decode(Pass.self, from: data)
        #expect(pass.storeCard?.primaryFields?.first?.currencyCode == "USD")
    }
}
