import Testing

@testable import PassModel

@Suite struct StyleRuleTests {
    @Test func noStyleKey() {
        let diagnostics = validate(minimalPass(.coupon).setting("coupon", nil))
        #expect(problems(diagnostics) == ["error style.missing @ (top level)"])
        #expect(diagnostics[0].message.contains("boardingPass, coupon, eventTicket, generic, storeCard"))
    }

    @Test func twoStyleKeys() {
        let diagnostics = validate(minimalPass(.coupon).setting("eventTicket", [:]))
        #expect(problems(diagnostics) == ["error style.multiple @ eventTicket"])
        #expect(diagnostics[0].message.contains("coupon and eventTicket"))
    }

    @Test func styleMustBeAnObject() {
        #expect(problems(of: minimalPass(.coupon).setting("coupon", [])) == ["error key.type @ coupon"])
    }

    @Test func transitTypeRequiredOnBoardingPass() {
        #expect(
            problems(of: minimalPass(.boardingPass).setting("boardingPass.transitType", nil)) == [
                "error transitType.required @ boardingPass.transitType"
            ])
    }

    @Test func transitTypeMustBeKnown() {
        let diagnostics = validate(minimalPass(.boardingPass).setting("boardingPass.transitType", "plane"))
        #expect(problems(diagnostics) == ["error transitType.value @ boardingPass.transitType"])
        #expect(
            diagnostics[0].message
                == "transitType \"plane\" is not one of PKTransitTypeAir, PKTransitTypeBoat, PKTransitTypeBus, PKTransitTypeGeneric, PKTransitTypeTrain; use PKTransitTypeAir for flights"
        )
    }

    @Test(arguments: [
        ("ferry", TransitType.boat), ("Train", .train), ("PKTransitTypeBuss", .bus), ("hovercraft", .generic),
    ])
    func transitTypeSuggestion(text: String, expected: TransitType) {
        let diagnostics = validate(minimalPass(.boardingPass).setting("boardingPass.transitType", .string(text)))
        #expect(diagnostics.first?.message.contains("; use \(expected.rawValue)") == true, "\(diagnostics)")
    }

    @Test(arguments: [PassStyle.coupon, .eventTicket, .generic, .storeCard])
    func transitTypeForbiddenElsewhere(style: PassStyle) {
        let pass = minimalPass(style).setting("\(style.key).transitType", "PKTransitTypeAir")
        #expect(problems(of: pass) == ["error transitType.forbidden @ \(style.key).transitType"])
    }

    @Test func fieldArrayMustBeAnArray() {
        #expect(
            problems(of: minimalPass(.generic).setting("generic.primaryFields", ["key": "a"])) == [
                "error key.type @ generic.primaryFields"
            ])
    }

    @Test func fieldMustBeAnObject() {
        #expect(
            problems(of: minimalPass(.generic).setting("generic.primaryFields", ["a"])) == [
                "error key.type @ generic.primaryFields[0]"
            ])
    }
}

@Suite struct FieldRuleTests {
    /// A generic pass with one field in `area`.
    func pass(_ field: JSONValue, in area: String = "secondaryFields", style: PassStyle = .generic) -> JSONValue {
        minimalPass(style).setting("\(style.key).\(area)", [field])
    }

    @Test func keyMissing() {
        #expect(problems(of: pass(["value": "x"])) == ["error field.key.missing @ generic.secondaryFields[0].key"])
    }

    @Test func keyEmpty() {
        #expect(
            problems(of: pass(["key": "", "value": "x"])) == [
                "error field.key.missing @ generic.secondaryFields[0].key"
            ])
    }

    @Test func keyWrongType() {
        #expect(problems(of: pass(["key": 3, "value": "x"])) == ["error key.type @ generic.secondaryFields[0].key"])
    }

    @Test func keyUniqueAcrossAllArrays() {
        let json = validPass(.boardingPass).setting("boardingPass.backFields[1]", ["key": "seat", "value": "again"])
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["error field.key.unique @ boardingPass.backFields[1].key"])
        #expect(diagnostics[0].message.contains("already used at boardingPass.auxiliaryFields[2]"))
    }

    @Test func keyUniqueWithinOneArray() {
        let json = minimalPass(.generic).setting(
            "generic.backFields", [["key": "a", "value": "1"], ["key": "a", "value": "2"]])
        #expect(problems(of: json) == ["error field.key.unique @ generic.backFields[1].key"])
    }

    @Test func valueMissing() {
        #expect(problems(of: pass(["key": "a"])) == ["error field.value.missing @ generic.secondaryFields[0].value"])
    }

    @Test(arguments: [JSONValue.bool(true), .null, ["x"], ["a": 1]])
    func valueMustBeStringOrNumber(value: JSONValue) {
        #expect(
            problems(of: pass(["key": "a", "value": value])) == [
                "error field.value.type @ generic.secondaryFields[0].value"
            ])
    }

    @Test func labelMustBeAString() {
        #expect(
            problems(of: pass(["key": "a", "value": "x", "label": 5])) == [
                "error key.type @ generic.secondaryFields[0].label"
            ])
    }

    @Test(arguments: ["dateStyle", "timeStyle"])
    func dateStyleNeedsADateValue(styleKey: String) {
        let field = JSONValue.object(["key": "a", "value": "tomorrow"]).setting(styleKey, "PKDateStyleShort")
        let diagnostics = validate(pass(field))
        #expect(problems(diagnostics) == ["error field.value.date @ generic.secondaryFields[0].value"])
    }

    @Test func dateStyleWithNumberValue() {
        #expect(
            problems(of: pass(["key": "a", "value": 5, "dateStyle": "PKDateStyleShort"])) == [
                "error field.value.date @ generic.secondaryFields[0].value"
            ])
    }

    @Test func dateValueNeedsHoursAndMinutes() {
        let diagnostics = validate(pass(["key": "a", "value": "2026-12-01", "dateStyle": "PKDateStyleShort"]))
        #expect(problems(diagnostics) == ["error field.value.date @ generic.secondaryFields[0].value"])
        #expect(diagnostics[0].message.contains("2026-12-01T09:30Z"))
    }

    @Test func changeMessageNeedsPlaceholder() {
        let diagnostics = validate(pass(["key": "a", "value": "x", "changeMessage": "Gate changed"]))
        #expect(problems(diagnostics) == ["error field.changeMessage @ generic.secondaryFields[0].changeMessage"])
        #expect(diagnostics[0].message.contains("%@"))
    }

    @Test func textAlignmentMustBeKnown() {
        let diagnostics = validate(pass(["key": "a", "value": "x", "textAlignment": "center"]))
        #expect(problems(diagnostics) == ["error field.textAlignment @ generic.secondaryFields[0].textAlignment"])
        #expect(diagnostics[0].message.hasSuffix("; use PKTextAlignmentCenter"))
    }

    @Test(arguments: ["primaryFields", "backFields"])
    func textAlignmentNotOnPrimaryOrBackFields(area: String) {
        let json = pass(["key": "a", "value": "x", "textAlignment": "PKTextAlignmentLeft"], in: area)
        #expect(problems(of: json) == ["error field.textAlignment.placement @ generic.\(area)[0].textAlignment"])
    }

    @Test(arguments: ["headerFields", "secondaryFields", "auxiliaryFields"])
    func textAlignmentAllowedElsewhere(area: String) {
        #expect(
            problems(of: pass(["key": "a", "value": "x", "textAlignment": "PKTextAlignmentNatural"], in: area)) == [])
    }

    @Test func dateStyleMustBeKnown() {
        let json = pass(["key": "a", "value": "2026-12-01T10:00Z", "dateStyle": "short"])
        #expect(problems(of: json) == ["error field.dateStyle @ generic.secondaryFields[0].dateStyle"])
    }

    @Test func timeStyleMustBeKnown() {
        let json = pass(["key": "a", "value": "2026-12-01T10:00Z", "timeStyle": "PKDateStyleTiny"])
        #expect(problems(of: json) == ["error field.timeStyle @ generic.secondaryFields[0].timeStyle"])
    }

    @Test func ignoresTimeZoneMustBeABoolean() {
        let json = pass([
            "key": "a", "value": "2026-12-01T10:00Z", "dateStyle": "PKDateStyleShort", "ignoresTimeZone": "true",
        ])
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["error key.type @ generic.secondaryFields[0].ignoresTimeZone"])
        #expect(diagnostics[0].message.contains("write true without quotes"))
    }

    @Test func dateOptionsWithoutStyleAreAWarning() {
        let json = pass(["key": "a", "value": "x", "isRelative": true])
        #expect(problems(of: json) == ["warning field.dateOptions @ generic.secondaryFields[0].isRelative"])
    }

    @Test func numberStyleMustBeKnown() {
        #expect(
            problems(of: pass(["key": "a", "value": 1, "numberStyle": "PKNumberStylePercentage"])) == [
                "error field.numberStyle @ generic.secondaryFields[0].numberStyle"
            ])
    }

    @Test func numberStyleNeedsANumber() {
        #expect(
            problems(of: pass(["key": "a", "value": "25%", "numberStyle": "PKNumberStylePercent"])) == [
                "error field.numberStyle.numeric @ generic.secondaryFields[0].numberStyle"
            ])
    }

    @Test func currencyCodeNeedsANumber() {
        let diagnostics = validate(pass(["key": "a", "value": "12.50", "currencyCode": "EUR"]))
        #expect(problems(diagnostics) == ["error field.currencyCode.numeric @ generic.secondaryFields[0].currencyCode"])
    }

    @Test func currencyCodeMustLookLikeISO4217() {
        #expect(
            problems(of: pass(["key": "a", "value": 1, "currencyCode": "euro"])) == [
                "error field.currencyCode @ generic.secondaryFields[0].currencyCode"
            ])
    }

    @Test func dataDetectorTypesMustBeKnown() {
        let json = pass(
            ["key": "a", "value": "x", "dataDetectorTypes": ["PKDataDetectorTypeLink", "PKDataDetectorTypeEmail"]],
            in: "backFields")
        #expect(problems(of: json) == ["error field.dataDetectorTypes @ generic.backFields[0].dataDetectorTypes[1]"])
    }

    @Test func dataDetectorSuggestion() {
        let json = pass(["key": "a", "value": "x", "dataDetectorTypes": ["phone"]], in: "backFields")
        #expect(validate(json).first?.message.hasSuffix("; use PKDataDetectorTypePhoneNumber") == true)
    }

    @Test func dataDetectorTypesOnlyOnBackFields() {
        let json = pass(
            ["key": "a", "value": "x", "dataDetectorTypes": ["PKDataDetectorTypeLink"]], in: "secondaryFields")
        #expect(
            problems(of: json) == [
                "error field.dataDetectorTypes.placement @ generic.secondaryFields[0].dataDetectorTypes"
            ])
    }

    @Test(arguments: [
        "<b>bold</b>", "<a href=\"https://x.example\" target=\"_blank\">x</a>", "<img src=x>", "<a>no href</a>",
        "<br/>",
        "<script>alert(1)</script>", "<a href=\"https://x.example\" onclick=\"steal()\">x</a>", "x<!-- c -->",
        "<p>x</p>",
        "x</p>", "<body onload=\"x()\">y", "<a href=\"https://x.example\"><img src=y></a>",
        "<svg><a href=\"https://x.example\">z</a></svg>",
    ])
    func attributedValueOnlyAllowsLinks(text: String) {
        let diagnostics = validate(
            pass(["key": "a", "value": "x", "attributedValue": .string(text)], in: "backFields"))
        #expect(problems(diagnostics) == ["error field.attributedValue @ generic.backFields[0].attributedValue"])
        #expect(diagnostics.first?.message.contains("<a href") == true)
    }

    @Test(
        arguments: [
            "plain", "<a href=\"https://x\">x</a>", "<a  HREF = 'tel:+4712345678' >y</a >", "a < b", "1 < 2 but 3 > 2",
            42,
            "<a href=mailto:help@example.com>mail</a> &amp; <a href='http://example.com/?a=1&amp;b=2'>web</a>", "x</a>",
        ] as [JSONValue])
    func attributedValueAccepts(value: JSONValue) {
        #expect(problems(of: pass(["key": "a", "value": "x", "attributedValue": value], in: "backFields")) == [])
    }

    /// Only https, http, tel and mailto targets: a link to javascript:, data:, vbscript: or a relative path is refused.
    @Test(arguments: [
        "javascript:alert(1)", "JAVASCRIPT:alert(1)", "java&#9;script:alert(1)", "&#106;avascript:alert(1)",
        "javascript&colon;alert(1)", "data:text/html,<script>x</script>", "vbscript:msgbox", "/relative", "terms.html",
        "https:evil.example", "https:///x", "tel:", " https://x.example", "file:///etc/passwd",
    ])
    func attributedValueLinksOnlyToWebPhoneAndMail(href: String) {
        let diagnostics = validate(
            pass(
                ["key": "a", "value": "x", "attributedValue": .string("See <a href=\"\(href)\">this</a>")],
                in: "backFields"))
        #expect(problems(diagnostics) == ["error field.attributedValue.link @ generic.backFields[0].attributedValue"])
        #expect(diagnostics.first?.message.contains("https, http, tel or mailto") == true)
    }

    @Test func attributedValueMustBeStringOrNumber() {
        #expect(
            problems(of: pass(["key": "a", "value": "x", "attributedValue": true], in: "backFields")) == [
                "error field.attributedValue @ generic.backFields[0].attributedValue"
            ])
    }

    @Test(arguments: [JSONValue.int(2), .int(-1), .string("1")])
    func rowIsZeroOrOne(row: JSONValue) {
        let json = pass(["key": "a", "value": "x", "row": row], in: "auxiliaryFields", style: .eventTicket)
        #expect(problems(of: json) == ["error field.row @ eventTicket.auxiliaryFields[0].row"])
    }

    @Test func rowOnlyInEventTicketAuxiliaryFields() {
        let onCoupon = pass(["key": "a", "value": "x", "row": 1], in: "auxiliaryFields", style: .coupon)
        #expect(problems(of: onCoupon) == ["error field.row.placement @ coupon.auxiliaryFields[0].row"])
        let onSecondary = pass(["key": "a", "value": "x", "row": 0], in: "secondaryFields", style: .eventTicket)
        #expect(problems(of: onSecondary) == ["error field.row.placement @ eventTicket.secondaryFields[0].row"])
    }

    @Test func fieldSemanticsEventTypeIsChecked() {
        let json = pass(
            ["key": "a", "value": "x", "semantics": ["eventType": "PKEventTypeConcert"]], style: .eventTicket)
        #expect(
            problems(of: json) == ["error semantics.eventType @ eventTicket.secondaryFields[0].semantics.eventType"])
    }
}

@Suite struct DisplayLimitTests {
    @Test(arguments: [
        (PassStyle.generic, "headerFields", 4),
        (.generic, "primaryFields", 2),
        (.boardingPass, "primaryFields", 3),
        (.eventTicket, "secondaryFields", 5),
        (.coupon, "auxiliaryFields", 5),
        (.boardingPass, "auxiliaryFields", 6),
    ])
    func tooManyFieldsIsAWarning(style: PassStyle, area: String, count: Int) {
        let json = minimalPass(style).setting("\(style.key).\(area)", fields(count, prefix: "f"))
        let diagnostics = validate(json)
        #expect(problems(diagnostics) == ["warning fields.limit @ \(style.key).\(area)"])
        #expect(diagnostics.allSatisfy { !$0.isError })
    }

    @Test(arguments: [
        (PassStyle.generic, "headerFields", 3),
        (.generic, "primaryFields", 1),
        (.boardingPass, "primaryFields", 2),
        (.generic, "secondaryFields", 4),
        (.boardingPass, "auxiliaryFields", 5),
        (.generic, "backFields", 40),
    ])
    func fieldsWithinLimitsAreFine(style: PassStyle, area: String, count: Int) {
        #expect(problems(of: minimalPass(style).setting("\(style.key).\(area)", fields(count, prefix: "f"))) == [])
    }

    @Test(arguments: [PassStyle.coupon, .storeCard, .generic])
    func squareBarcodeLimitsSecondaryAndAuxiliaryTogether(style: PassStyle) {
        let json = minimalPass(style)
            .setting("barcodes", [["format": "PKBarcodeFormatQR", "message": "m", "messageEncoding": "utf-8"]])
            .setting("\(style.key).secondaryFields", fields(3, prefix: "s"))
            .setting("\(style.key).auxiliaryFields", fields(2, prefix: "a"))
        #expect(problems(of: json) == ["warning fields.squareBarcodeLimit @ \(style.key)"])
        let withPDF417 = json.setting("barcodes[0].format", "PKBarcodeFormatPDF417")
        #expect(problems(of: withPDF417) == [])
    }

    @Test func squareBarcodeLimitUsesTheLegacyBarcodeWhenThereAreNoBarcodes() {
        let json = minimalPass(.coupon)
            .setting("barcode", ["format": "PKBarcodeFormatAztec", "message": "m", "messageEncoding": "utf-8"])
            .setting("coupon.secondaryFields", fields(4, prefix: "s"))
            .setting("coupon.auxiliaryFields", fields(1, prefix: "a"))
        #expect(problems(of: json) == ["warning fields.squareBarcodeLimit @ coupon"])
    }

    @Test func squareBarcodeDoesNotLimitEventTickets() {
        let json = minimalPass(.eventTicket)
            .setting("barcodes", [["format": "PKBarcodeFormatQR", "message": "m", "messageEncoding": "utf-8"]])
            .setting("eventTicket.secondaryFields", fields(3, prefix: "s"))
            .setting("eventTicket.auxiliaryFields", fields(3, prefix: "a"))
        #expect(problems(of: json) == [])
    }
}
