package import Foundation
package import PassModel
import Synchronization

/// Field values as Wallet shows them: dates with dateStyle/timeStyle
/// (ignoresTimeZone, isRelative), numbers with numberStyle or currencyCode,
/// text looked up in the language's pass.strings ("Field Dictionary Keys"
/// in Apple's Wallet Passes documentation).
package struct FieldFormatter: Sendable {
    package var language: String
    /// The language's pass.strings table; Wallet shows a key's value in place of text that is a key.
    package var strings: [String: String]
    /// The zone a device would show times in when a field does not ignore time zones.
    package var deviceTimeZone: TimeZone
    /// "Now" for relative dates.
    package var now: Date

    package init(
        language: String, strings: [String: String] = [:], deviceTimeZone: TimeZone = .current, now: Date = Date()
    ) {
        self.language = language
        self.strings = strings
        self.deviceTimeZone = deviceTimeZone
        self.now = now
    }

    var locale: Locale { Locale(identifier: language == PreviewLanguages.defaultName ? "en_US" : language) }

    /// Text as the pass.strings of the language has it.
    package func localized(_ text: String) -> String { strings[text] ?? text }

    /// The text Wallet shows for a field's value.
    package func value(of field: JSONValue) -> String {
        guard let value = field["value"] else { return "" }
        switch value {
        case .string(let text):
            if field["dateStyle"] != nil || field["timeStyle"] != nil, let date = try? W3CDate(parsing: text) {
                return format(date, field: field)
            }
            return localized(text)
        case .int(let number): return format(Double(number), isInteger: true, field: field)
        case .double(let number): return format(number, isInteger: number == number.rounded(), field: field)
        case .bool(let flag): return flag ? "true" : "false"
        default: return ""
        }
    }

    func format(_ number: Double, isInteger: Bool, field: JSONValue) -> String {
        let style: NumberFormatter.Style
        let currency = field["currencyCode"]?.stringValue
        if currency != nil {
            style = .currency
        } else {
            switch field["numberStyle"]?.stringValue {
            case "PKNumberStyleDecimal": style = .decimal
            case "PKNumberStylePercent": style = .percent
            case "PKNumberStyleScientific": style = .scientific
            case "PKNumberStyleSpellOut": style = .spellOut
            default:
                return isInteger && abs(number) < 1e15 ? String(Int(number)) : String(number)
            }
        }
        let formatter = NumberFormatters.shared.formatter(locale: locale, style: style, currency: currency)
        return formatter.string(from: NSNumber(value: number)) ?? String(number)
    }

    func format(_ date: W3CDate, field: JSONValue) -> String {
        // ignoresTimeZone: the time as written, in the zone of the value; otherwise in the device's zone.
        let zone =
            field["ignoresTimeZone"]?.boolValue == true
            ? TimeZone(secondsFromGMT: date.utcOffset) ?? deviceTimeZone : deviceTimeZone
        let formatter = dateFormatter(
            date: style(field["dateStyle"]?.stringValue), time: style(field["timeStyle"]?.stringValue), zone: zone)
        let instant = Self.instant(date)
        if field["isRelative"]?.boolValue == true, formatter.dateStyle != .none,
            let word = relativeDay(instant, zone: zone)
        {
            formatter.dateStyle = .none
            let time = formatter.timeStyle == .none ? "" : formatter.string(from: instant)
            return time.isEmpty ? word : "\(word), \(time)"
        }
        return formatter.string(from: instant)
    }

    func style(_ name: String?) -> DateFormatter.Style {
        switch name {
        case "PKDateStyleShort": .short
        case "PKDateStyleMedium": .medium
        case "PKDateStyleLong": .long
        case "PKDateStyleFull": .full
        default: .none
        }
    }

    /// "Today", "Tomorrow", "Yesterday" (in English, German, French or Spanish), when the date is one of them.
    func relativeDay(_ date: Date, zone: TimeZone) -> String? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let days =
            calendar.dateComponents([.day], from: calendar.startOfDay(for: now), to: calendar.startOfDay(for: date)).day
            ?? 99
        let words: [String: [String]] = [
            "de": ["Gestern", "Heute", "Morgen"], "fr": ["Hier", "Aujourd’hui", "Demain"],
            "es": ["Ayer", "Hoy", "Mañana"],
        ]
        guard (-1...1).contains(days) else { return nil }
        let list = words[String(language.prefix(2))] ?? ["Yesterday", "Today", "Tomorrow"]
        return list[days + 1]
    }
}

/// The languages of a pass: one per `<lang>.lproj/pass.strings` (an order's
/// `order.strings`), or one unnamed language when it has none.
package enum PreviewLanguages {
    package static let defaultName = "default"

    /// Language → its pass.strings (`stringsFile`) table, sorted with English first.
    package static func tables(
        of files: [(name: String, bytes: [UInt8])], stringsFile: String = WalletItemKind.pass.stringsFile
    )
        -> [(language: String, strings: [String: String])]
    {
        var tables: [(String, [String: String])] = []
        for file in files where file.name.hasSuffix("/" + stringsFile) {
            guard let language = PassStrings.language(ofPath: file.name) else { continue }
            tables.append((language, (try? PassStrings.table(file.bytes)) ?? [:]))
        }
        if tables.isEmpty { return [(defaultName, [:])] }
        return tables.sorted { ($0.0.hasPrefix("en") ? 0 : 1, $0.0) < ($1.0.hasPrefix("en") ? 0 : 1, $1.0) }
    }
}

/// Number formatters made once per locale, style and currency: making one (ICU's) costs more than a landing
/// page's other work, and a build makes thousands of pages with the same few. Formatting with one from several
/// threads is safe (swift-corelibs-foundation's NumberFormatter holds its ICU formatter under a lock).
final class NumberFormatters: Sendable {
    static let shared = NumberFormatters()

    private struct Key: Hashable {
        var locale: String
        var style: UInt
        var currency: String?
    }

    private let formatters = Mutex<[Key: NumberFormatter]>([:])

    func formatter(locale: Locale, style: NumberFormatter.Style, currency: String?) -> NumberFormatter {
        let key = Key(locale: locale.identifier, style: style.rawValue, currency: currency)
        return formatters.withLock { formatters in
            if let made = formatters[key] { return made }
            let formatter = NumberFormatter()
            formatter.locale = locale
            formatter.numberStyle = style
            if let currency { formatter.currencyCode = currency }
            formatters[key] = formatter
            return formatter
        }
    }
}
