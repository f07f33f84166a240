import Foundation
import PassModel
import PassPreview
import Testing

@Suite("Preview value formatting, as Wallet formats field values")
struct FieldFormatterTests {
    func field(_ pairs: [(String, JSONValue)]) -> JSONValue { .object(JSONObject(pairs)) }

    let utc = TimeZone(identifier: "UTC")!

    @Test("dateStyle and timeStyle, with ignoresTimeZone keeping the value's own offset")
    func dates() {
        let english = FieldFormatter(language: "en", deviceTimeZone: utc)
        let departs = field([
            ("value", .string("2026-12-01T09:30:00+01:00")), ("dateStyle", .string("PKDateStyleNone")),
            ("timeStyle", .string("PKDateStyleShort")), ("ignoresTimeZone", .bool(true)),
        ])
        #expect(english.value(of: departs).replacingOccurrences(of: "\u{202F}", with: " ") == "9:30 AM")
        let inDeviceZone = field([
            ("value", .string("2026-12-01T09:30:00+01:00")), ("timeStyle", .string("PKDateStyleShort")),
        ])
        #expect(english.value(of: inDeviceZone).replacingOccurrences(of: "\u{202F}", with: " ") == "8:30 AM")
        let date = field([("value", .string("2026-12-01T09:30:00Z")), ("dateStyle", .string("PKDateStyleMedium"))])
        #expect(english.value(of: date) == "Dec 1, 2026")
        #expect(FieldFormatter(language: "de", deviceTimeZone: utc).value(of: date) == "01.12.2026")
    }

    @Test("isRelative shows Today and Tomorrow in the pass's language")
    func relativeDates() {
        let now = Date(timeIntervalSince1970: 1_796_000_000)  // 2026-11-29T…Z
        let tomorrow = ISO8601DateFormatter().string(from: now.addingTimeInterval(86_400))
        let relative = field([
            ("value", .string(tomorrow)), ("dateStyle", .string("PKDateStyleMedium")), ("isRelative", .bool(true)),
        ])
        #expect(FieldFormatter(language: "en", deviceTimeZone: utc, now: now).value(of: relative) == "Tomorrow")
        #expect(FieldFormatter(language: "de", deviceTimeZone: utc, now: now).value(of: relative) == "Morgen")
    }

    @Test("currencyCode and numberStyle in the language's conventions; plain numbers as they are")
    func numbers() {
        let balance = field([("value", .double(12.5)), ("currencyCode", .string("EUR"))])
        #expect(FieldFormatter(language: "en").value(of: balance) == "€12.50")
        #expect(
            FieldFormatter(language: "de").value(of: balance).replacingOccurrences(of: "\u{00A0}", with: " ")
                == "12,50 €")
        #expect(
            FieldFormatter(language: "en").value(
                of: field([("value", .double(0.15)), ("numberStyle", .string("PKNumberStylePercent"))])) == "15%")
        #expect(
            FieldFormatter(language: "en").value(
                of: field([("value", .int(1_234_567)), ("numberStyle", .string("PKNumberStyleDecimal"))]))
                == "1,234,567")
        #expect(FieldFormatter(language: "en").value(of: field([("value", .int(117))])) == "117")
    }

    @Test("text values that are pass.strings keys show the language's text")
    func localizedText() {
        let formatter = FieldFormatter(language: "de", strings: ["tier_gold": "Gold", "member_label": "Mitglied"])
        #expect(formatter.value(of: field([("value", .string("tier_gold"))])) == "Gold")
        #expect(formatter.localized("member_label") == "Mitglied")
        #expect(formatter.value(of: field([("value", .string("Daniel Weiß"))])) == "Daniel Weiß")
    }
}
